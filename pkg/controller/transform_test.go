package controller

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripCachedKeepsWhatThePodCacheIsReadFor: a cached pod keeps its
// metadata, status, node, scheduler, container names and images, and its
// PVC volumes; commands, environment, probes, mounts and other volumes go.
func TestStripCachedKeepsWhatThePodCacheIsReadFor(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-tidb-0", Labels: map[string]string{"a": "b"},
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
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	status := *pod.Status.DeepCopy()
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
	if p.ManagedFields != nil || p.Labels["a"] != "b" || p.Annotations["tidb.pingcap.com/tidb-graceful-shutdown"] != "true" ||
		!reflect.DeepEqual(p.Status, status) {
		t.Errorf("metadata or status changed: %+v", p.ObjectMeta)
	}
	svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}}
	if got, _ := StripCached(svc); got.(*corev1.Service).Spec.ClusterIP != "None" {
		t.Error("a Service's spec was changed; only pods are stripped")
	}
}

// TestStripCachedStripsPodTemplates: a cached StatefulSet keeps its
// replicas, claim templates and its template's metadata, container images
// and volumes; the rest of the template's spec goes.
func TestStripCachedStripsPodTemplates(t *testing.T) {
	t.Parallel()
	one := int32(1)
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &one,
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "pd"}}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{SchedulerName: "s", Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0",
				Command: []string{"/bin/sh"}}}, Volumes: []corev1.Volume{{Name: "config"}}}}}}
	got, err := StripCached(sts)
	if err != nil {
		t.Fatal(err)
	}
	s := got.(*appsv1.StatefulSet)
	want := corev1.PodSpec{Containers: []corev1.Container{{Name: "pd", Image: "pingcap/pd:v8.5.0"}}, Volumes: []corev1.Volume{{Name: "config"}}}
	if !reflect.DeepEqual(s.Spec.Template.Spec, want) || s.Spec.Template.Annotations["a"] != "b" ||
		*s.Spec.Replicas != 1 || len(s.Spec.VolumeClaimTemplates) != 1 {
		t.Errorf("stripped StatefulSet %+v", s.Spec)
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
