package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripCachedKeepsWhatThePodCacheIsReadFor: a cached pod keeps its
// metadata, node, scheduler, container names and images, its PVC volumes,
// and of its status the phase, conditions and container states;
// commands, environment, probes, mounts, other volumes, addresses, images
// and container IDs go.
func TestStripCachedKeepsWhatThePodCacheIsReadFor(t *testing.T) {
	t.Parallel()
	since := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-tidb-0", Labels: map[string]string{"a": "b",
			appsv1.ControllerRevisionHashLabelKey: "db-tidb-1", appsv1.StatefulSetPodNameLabel: "db-tidb-0", appsv1.PodIndexLabel: "0"},
			Annotations:   map[string]string{"tidb.pingcap.com/tidb-graceful-shutdown": "true"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}},
		Spec: corev1.PodSpec{
			NodeName: "node-1", SchedulerName: "tidb-scheduler", Hostname: "db-tidb-0",
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers: []corev1.Container{{Name: "tidb", Image: "pingcap/tidb:v8.5.0", Command: []string{"/bin/sh"},
				Env: []corev1.EnvVar{{Name: "A", Value: "1"}}, VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc"}}}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
				{Name: "tidb", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tidb-db-tidb-0"}}},
			},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", HostIP: "192.168.0.1", StartTime: &since,
			Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: since, LastProbeTime: since},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: since}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "tidb", Ready: true, RestartCount: 2, Image: "pingcap/tidb:v8.5.0",
				ImageID: "sha256:0", ContainerID: "containerd://0", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: since}}}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}},
	}
	got, err := StripCached(pod)
	if err != nil {
		t.Fatal(err)
	}
	p := got.(*corev1.Pod)
	want := corev1.PodSpec{NodeName: "node-1", SchedulerName: "tidb-scheduler",
		Containers: []corev1.Container{{Name: "tidb", Image: "pingcap/tidb:v8.5.0"}},
		Volumes:    []corev1.Volume{{Name: "tidb", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tidb-db-tidb-0"}}}},
	}
	if !reflect.DeepEqual(p.Spec, want) {
		t.Errorf("stripped spec %+v, want %+v", p.Spec, want)
	}
	wantStatus := corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: since},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: since}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "tidb", Ready: true, RestartCount: 2,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: since}}}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}
	if !reflect.DeepEqual(p.Status, wantStatus) {
		t.Errorf("stripped status %+v, want %+v", p.Status, wantStatus)
	}
	if p.ManagedFields != nil || p.Labels["a"] != "b" || p.Annotations["tidb.pingcap.com/tidb-graceful-shutdown"] != "true" {
		t.Errorf("metadata changed: %+v", p.ObjectMeta)
	}
	if want := map[string]string{"a": "b", appsv1.ControllerRevisionHashLabelKey: "db-tidb-1"}; !reflect.DeepEqual(p.Labels, want) {
		t.Errorf("cached pod labels %v, want %v (the StatefulSet's pod-name and pod-index labels go, the revision stays)", p.Labels, want)
	}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}}
	if got, _ := StripCached(svc); got.(*corev1.Service).Spec.ClusterIP != "None" {
		t.Error("the spec of a Service the operator did not apply was changed")
	}
}

// TestStripCachedKeepsWhatTheVolumeCachesAreReadFor: a cached PVC keeps
// its volume, classes, requests and status phase, capacity and
// modification; a cached PV its reclaim policy and phase; both keep
// their metadata.
func TestStripCachedKeepsWhatTheVolumeCachesAreReadFor(t *testing.T) {
	t.Parallel()
	class, attrs := "local", "gold"
	size := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tikv-db-tikv-0", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: &class, VolumeAttributesClassName: &attrs,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: size}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: size, CurrentVolumeAttributesClassName: &attrs,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Conditions:  []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimResizing}}}}
	got, _ := StripCached(pvc)
	c := got.(*corev1.PersistentVolumeClaim)
	wantSpec := corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: &class, VolumeAttributesClassName: &attrs,
		Resources: corev1.VolumeResourceRequirements{Requests: size}}
	wantStatus := corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: size, CurrentVolumeAttributesClassName: &attrs}
	if !reflect.DeepEqual(c.Spec, wantSpec) || !reflect.DeepEqual(c.Status, wantStatus) || c.Labels["a"] != "b" {
		t.Errorf("stripped PVC %+v", c)
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete, Capacity: size,
			ClaimRef:               &corev1.ObjectReference{Name: "tikv-db-tikv-0"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}
	got, _ = StripCached(pv)
	v := got.(*corev1.PersistentVolume)
	if !reflect.DeepEqual(v.Spec, corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete}) ||
		v.Status.Phase != corev1.VolumeBound || v.Labels["a"] != "b" {
		t.Errorf("stripped PV %+v", v)
	}
}

// TestStripCachedStripsPodTemplates: a cached StatefulSet keeps its
// replicas and its claim templates whole (an update sends them back), and
// its template's metadata, container images and volumes by what they
// mount; the rest of the template's spec goes.
func TestStripCachedStripsPodTemplates(t *testing.T) {
	t.Parallel()
	one := int32(1)
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &one,
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "pd", Labels: map[string]string{"c": "d"}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{SchedulerName: "s", Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0",
				Command: []string{"/bin/sh"}}}, Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db-pd-1"}, Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}}},
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-pd-tls", Items: []corev1.KeyToPath{{Key: "k", Path: "p"}}}}},
				{Name: "annotations", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}}}}}}}
	claims := []corev1.PersistentVolumeClaim{*sts.Spec.VolumeClaimTemplates[0].DeepCopy()}
	got, err := StripCached(sts)
	if err != nil {
		t.Fatal(err)
	}
	s := got.(*appsv1.StatefulSet)
	want := corev1.PodSpec{Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0"}}, Volumes: []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "db-pd-1"}}}},
		{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db-pd-tls"}}},
		{Name: "annotations"}}}
	if !reflect.DeepEqual(s.Spec.Template.Spec, want) || s.Spec.Template.Annotations["a"] != "b" || *s.Spec.Replicas != 1 {
		t.Errorf("stripped StatefulSet %+v", s.Spec)
	}
	// An update sends back every field but replicas, strategy and template
	// as cached, and the API server refuses a changed claim template.
	if !equality.Semantic.DeepEqual(s.Spec.VolumeClaimTemplates, claims) {
		t.Errorf("claim templates changed in the cache: %+v, want %+v", s.Spec.VolumeClaimTemplates, claims)
	}
	dep := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: sts.Spec.Template}}
	dep.Spec.Template.Spec.Containers = []corev1.Container{{Name: "discovery", Image: "x", Args: []string{"-v"}}}
	if got, _ := StripCached(dep); got.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args != nil {
		t.Error("a Deployment's template keeps its container args")
	}
}

// TestCachedObjectsShareTheirStrings: two objects decoded apart share one
// copy of each label key and value, namespace and owner once cached.
func TestCachedObjectsShareTheirStrings(t *testing.T) {
	t.Parallel()
	obj := func() *corev1.Service {
		// strings.Clone: a decoder gives each object its own copies.
		c := strings.Clone
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c("ns"),
			Labels:          map[string]string{c("app.kubernetes.io/component"): c("pd")},
			Annotations:     map[string]string{c("tidb.kubetidb.io/applied-hash"): c("0123")},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: c("pingcap.com/v1alpha1"), Kind: c("TidbCluster"), Name: c("db"), UID: "u"}}}}
	}
	a, _ := StripCached(obj())
	b, _ := StripCached(obj())
	ma, mb := a.(*corev1.Service).ObjectMeta, b.(*corev1.Service).ObjectMeta
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	key := func(m map[string]string) string {
		for k := range m {
			return k
		}
		return ""
	}
	if !same(ma.Namespace, mb.Namespace) || !same(key(ma.Labels), key(mb.Labels)) ||
		!same(ma.Labels["app.kubernetes.io/component"], mb.Labels["app.kubernetes.io/component"]) ||
		!same(key(ma.Annotations), key(mb.Annotations)) || !same(ma.OwnerReferences[0].Kind, mb.OwnerReferences[0].Kind) {
		t.Error("cached objects hold their own copies of shared strings")
	}
	if ma.Labels["app.kubernetes.io/component"] != "pd" || ma.Annotations["tidb.kubetidb.io/applied-hash"] != "0123" ||
		ma.OwnerReferences[0].Name != "db" {
		t.Errorf("metadata changed: %+v", ma)
	}
}

// TestStripCachedDropsTheDataOfOurConfigMaps: a ConfigMap the operator
// wrote (an applied hash) is cached without data; another's keeps it.
func TestStripCachedDropsTheDataOfOurConfigMaps(t *testing.T) {
	t.Parallel()
	ours := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"tidb.kubetidb.io/applied-hash": "h"}},
		Data: map[string]string{"config-file": "x"}, BinaryData: map[string][]byte{"b": {1}}}
	foreign := &corev1.ConfigMap{Data: map[string]string{"config-file": "x"}}
	if got, _ := StripCached(ours); got.(*corev1.ConfigMap).Data != nil || got.(*corev1.ConfigMap).BinaryData == nil {
		t.Errorf("our ConfigMap cached as %+v: data must go, binaryData stay", got)
	}
	if got, _ := StripCached(foreign); got.(*corev1.ConfigMap).Data["config-file"] != "x" {
		t.Error("another operator's ConfigMap lost its data")
	}
}

// TestCachedWorkloadsShareTheirLabelMaps: a StatefulSet's labels, selector,
// template and claim-template labels, decoded apart, are one map once
// cached, and so are a Service's with the same labels; a pod keeps a map of
// its own.
func TestCachedWorkloadsShareTheirLabelMaps(t *testing.T) {
	t.Parallel()
	labels := func() map[string]string {
		return map[string]string{strings.Clone("app.kubernetes.io/component"): "share-test", "app.kubernetes.io/instance": "db"}
	}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Labels: labels()}, Spec: appsv1.StatefulSetSpec{
		Selector:             &metav1.LabelSelector{MatchLabels: labels()},
		Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels()}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: labels()}}}}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Labels: labels()}, Spec: corev1.ServiceSpec{Selector: labels()}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels()}}
	for _, o := range []any{sts, svc, pod} {
		if _, err := StripCached(o); err != nil {
			t.Fatal(err)
		}
	}
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	one := sts.Labels
	for name, m := range map[string]map[string]string{"selector": sts.Spec.Selector.MatchLabels, "template": sts.Spec.Template.Labels,
		"claim template": sts.Spec.VolumeClaimTemplates[0].Labels, "Service": svc.Labels, "Service selector": svc.Spec.Selector} {
		if !same(one, m) {
			t.Errorf("%s labels are a map of their own", name)
		}
		if !reflect.DeepEqual(m, labels()) {
			t.Errorf("%s labels changed: %v", name, m)
		}
	}
	if same(one, pod.Labels) {
		t.Error("a pod's labels were shared: pods carry labels of their own member")
	}
}

// TestCachedPodsAndClaimsShareWhatRepeats: pods decoded apart with the same
// annotations (a component's Prometheus ones) share one map, and claims
// and claim templates of one size share one map of requests and
// capacities; another size gets a map of its own, and every value reads
// as it was decoded.
func TestCachedPodsAndClaimsShareWhatRepeats(t *testing.T) {
	t.Parallel()
	pod := func(port string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			"prometheus.io/scrape": "true", strings.Clone("prometheus.io/port"): strings.Clone(port)}}}
	}
	size := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(s)}
	}
	pvc := func(s string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
			Resources: corev1.VolumeResourceRequirements{Requests: size(s)}}, Status: corev1.PersistentVolumeClaimStatus{Capacity: size(s)}}
	}
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: size("7Gi")}}}}}}
	objs := []any{pod("7001"), pod("7001"), pod("7002"), pvc("7Gi"), pvc("7Gi"), pvc("7500Mi"), sts}
	for _, o := range objs {
		if _, err := StripCached(o); err != nil {
			t.Fatal(err)
		}
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	p1, p2, p3 := objs[0].(*corev1.Pod), objs[1].(*corev1.Pod), objs[2].(*corev1.Pod)
	if !same(p1.Annotations, p2.Annotations) || same(p1.Annotations, p3.Annotations) {
		t.Error("pods with the same annotations do not share one map, or pods with others do")
	}
	if p3.Annotations["prometheus.io/port"] != "7002" || p1.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("annotations changed: %v, %v", p1.Annotations, p3.Annotations)
	}
	c1, c2, c3 := objs[3].(*corev1.PersistentVolumeClaim), objs[4].(*corev1.PersistentVolumeClaim), objs[5].(*corev1.PersistentVolumeClaim)
	tmpl := sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests
	if !same(c1.Spec.Resources.Requests, c2.Status.Capacity) || !same(c1.Spec.Resources.Requests, tmpl) {
		t.Error("claims of one size do not share one map of requests")
	}
	if same(c1.Spec.Resources.Requests, c3.Spec.Resources.Requests) {
		t.Error("claims of two sizes share one map")
	}
	for _, got := range []struct {
		q    resource.Quantity
		want string
	}{{c3.Spec.Resources.Requests[corev1.ResourceStorage], "7500Mi"}, {tmpl[corev1.ResourceStorage], "7Gi"}} {
		if got.q.String() != got.want {
			t.Errorf("a shared size reads %s, want %s", got.q.String(), got.want)
		}
	}
}
