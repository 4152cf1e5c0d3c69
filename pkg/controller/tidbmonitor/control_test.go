package tidbmonitor

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

type fixture struct {
	t    *testing.T
	deps *controller.FakeDependencies
	c    *Controller
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	deps := controller.NewFakeDependencies()
	c, err := NewController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, deps: deps, c: c}
}

func newMonitor() *v1alpha1.TidbMonitor {
	return &v1alpha1.TidbMonitor{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "tm-uid", Generation: 1},
		Spec: v1alpha1.TidbMonitorSpec{
			Clusters:   []v1alpha1.TidbClusterRef{{Name: "basic"}},
			Prometheus: v1alpha1.PrometheusSpec{MonitorContainer: v1alpha1.MonitorContainer{BaseImage: "prom/prometheus", Version: "v2.27.1"}},
			Grafana:    &v1alpha1.GrafanaSpec{MonitorContainer: v1alpha1.MonitorContainer{BaseImage: "grafana/grafana", Version: "7.5.11"}},
		},
	}
}

func (f *fixture) seed(objs ...runtime.Object) {
	f.t.Helper()
	pc := f.deps.InformerFactory.Pingcap().V1alpha1()
	for _, o := range objs {
		var idx cache.Indexer
		switch o.(type) {
		case *v1alpha1.TidbMonitor:
			idx = pc.TidbMonitors().Informer().GetIndexer()
			if _, err := f.deps.FakePingcap.Tracker().Get(v1alpha1.SchemeGroupVersion.WithResource("tidbmonitors"), "ns", "basic"); err != nil {
				if err := f.deps.FakePingcap.Tracker().Add(o); err != nil {
					f.t.Fatal(err)
				}
			}
		case *v1alpha1.TidbCluster:
			idx = pc.TidbClusters().Informer().GetIndexer()
		}
		if err := idx.Update(o); err != nil {
			f.t.Fatal(err)
		}
	}
}

// seedWritten copies every object the fake kube client holds into the
// informer indexers, as the informers would after the writes.
func (f *fixture) seedWritten() {
	f.t.Helper()
	ctx := context.Background()
	k := f.deps.FakeKube
	kf := f.deps.KubeInformerFactory
	add := func(idx cache.Indexer, o any) {
		if err := idx.Update(o); err != nil {
			f.t.Fatal(err)
		}
	}
	sets, _ := k.AppsV1().StatefulSets("ns").List(ctx, metav1.ListOptions{})
	for i := range sets.Items {
		add(kf.Apps().V1().StatefulSets().Informer().GetIndexer(), &sets.Items[i])
	}
	svcs, _ := k.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		add(kf.Core().V1().Services().Informer().GetIndexer(), &svcs.Items[i])
	}
	cms, _ := k.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
	for i := range cms.Items {
		add(kf.Core().V1().ConfigMaps().Informer().GetIndexer(), &cms.Items[i])
	}
	sas, _ := k.CoreV1().ServiceAccounts("ns").List(ctx, metav1.ListOptions{})
	for i := range sas.Items {
		add(kf.Core().V1().ServiceAccounts().Informer().GetIndexer(), &sas.Items[i])
	}
	roles, _ := k.RbacV1().Roles("ns").List(ctx, metav1.ListOptions{})
	for i := range roles.Items {
		add(kf.Rbac().V1().Roles().Informer().GetIndexer(), &roles.Items[i])
	}
	rbs, _ := k.RbacV1().RoleBindings("ns").List(ctx, metav1.ListOptions{})
	for i := range rbs.Items {
		add(kf.Rbac().V1().RoleBindings().Informer().GetIndexer(), &rbs.Items[i])
	}
}

// writes lists the kube client's mutating actions as "verb kind/name".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.deps.FakeKube.Actions() {
		switch a.GetVerb() {
		case "create", "update":
			o, _ := meta.Accessor(a.(interface{ GetObject() runtime.Object }).GetObject())
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+o.GetName())
		case "patch", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	f.deps.FakeKube.ClearActions()
	return out
}

func (f *fixture) monitorStatus() v1alpha1.TidbMonitorStatus {
	f.t.Helper()
	tm, err := f.deps.FakePingcap.PingcapV1alpha1().TidbMonitors("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return tm.Status
}

func TestSyncCreatesTheMonitorObjectsThenConverges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newMonitor()
	f.seed(tm, &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{}, TiKV: &v1alpha1.TiKVSpec{}, TiDB: &v1alpha1.TiDBSpec{}}})
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.writes(), "\n")
	for _, want := range []string{"create serviceaccounts/basic-monitor", "create roles/basic-monitor",
		"create rolebindings/basic-monitor", "create configmaps/basic-monitor", "create configmaps/basic-monitor-grafana",
		"create services/basic-prometheus", "create services/basic-grafana", "create services/basic-monitor-reloader",
		"create statefulsets/basic-monitor"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in writes:\n%s", want, got)
		}
	}
	sts, err := f.deps.FakeKube.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(sts); ref == nil || ref.Kind != "TidbMonitor" || ref.UID != "tm-uid" {
		t.Errorf("StatefulSet controller reference %v", ref)
	}
	st := f.monitorStatus()
	if c := meta.FindStatusCondition(st.Conditions, ConditionReady); c == nil || c.Status != metav1.ConditionFalse || st.ObservedGeneration != 1 {
		t.Fatalf("status after first sync: %+v", st)
	}

	// The StatefulSet becomes ready; the caches hold what was written.
	f.seedWritten()
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1}
	if err := f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts); err != nil {
		t.Fatal(err)
	}
	cur, _ := f.deps.FakePingcap.PingcapV1alpha1().TidbMonitors("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	f.seed(cur)
	f.deps.FakePingcap.ClearActions()
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("converged monitor: want zero writes, got %v", w)
	}
	if !meta.IsStatusConditionTrue(f.monitorStatus().Conditions, ConditionReady) {
		t.Fatalf("Ready not True: %+v", f.monitorStatus().Conditions)
	}

	// Once Ready is written, one more sync writes nothing at all.
	cur, _ = f.deps.FakePingcap.PingcapV1alpha1().TidbMonitors("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	f.seed(cur)
	f.deps.FakePingcap.ClearActions()
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	if w, a := f.writes(), f.deps.FakePingcap.Actions(); len(w) != 0 || len(a) != 0 {
		t.Fatalf("second converged sync wrote: kube %v, pingcap %v", w, a)
	}
}

func TestSyncReportsInvalidAndUnsupported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newMonitor()
	tm.Spec.Clusters = nil
	f.seed(tm)
	err := f.c.sync(context.Background(), "ns/basic")
	if !flow.IsIgnore(err) {
		t.Fatalf("want IgnoreError, got %v", err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("invalid monitor: writes %v", w)
	}
	if !meta.IsStatusConditionTrue(f.monitorStatus().Conditions, ConditionInvalid) {
		t.Fatalf("Invalid not set: %+v", f.monitorStatus())
	}
	if ev := <-f.deps.FakeRecorder.Events; !strings.Contains(ev, "Warning FailedValidation") {
		t.Fatalf("event %q", ev)
	}

	g := newFixture(t)
	tm = newMonitor()
	tm.Spec.ClusterScoped = true
	g.seed(tm)
	if err := g.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(g.monitorStatus().Conditions, ConditionUnsupported)
	if c == nil || !strings.Contains(c.Message, "spec.clusterScoped") {
		t.Fatalf("Unsupported condition %+v", c)
	}
	found := false
	for len(g.deps.FakeRecorder.Events) > 0 {
		if ev := <-g.deps.FakeRecorder.Events; strings.Contains(ev, "Warning Unsupported") && strings.Contains(ev, "clusterScoped") {
			found = true
		}
	}
	if !found {
		t.Error("no Unsupported Warning event")
	}
}

func TestTidbClusterChangeEnqueuesItsMonitors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seed(newMonitor())
	f.c.enqueueMonitorsOf(&v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns"}})
	if n := f.c.Worker().Len(); n != 0 {
		t.Fatalf("unrelated cluster enqueued %d", n)
	}
	f.c.enqueueMonitorsOf(&v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
	if n := f.c.Worker().Len(); n != 1 {
		t.Fatalf("monitored cluster: queue %d, want 1", n)
	}
	if err := f.c.sync(context.Background(), "ns/gone"); err != nil {
		t.Fatalf("deleted monitor: %v", err)
	}
}

func TestLoweredShardsDeleteTheStaleStatefulSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newMonitor()
	two := int32(2)
	tm.Spec.Shards = &two
	f.seed(tm)
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	f.seedWritten()
	f.writes()
	one := int32(1)
	tm = tm.DeepCopy()
	tm.Spec.Shards = &one
	tm.Generation = 2
	f.seed(tm)
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.writes(), "\n")
	for _, want := range []string{"create statefulsets/basic-monitor", "delete statefulsets"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in writes:\n%s", want, got)
		}
	}
	var left []string
	for _, name := range []string{"basic-monitor-shard-0", "basic-monitor-shard-1"} {
		if _, err := f.deps.FakeKube.AppsV1().StatefulSets("ns").Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			left = append(left, name)
		}
	}
	if len(left) != 0 {
		t.Errorf("stale shards still exist: %v", left)
	}
}

func TestPersistentMonitorSetsItsPVReclaimPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if f.deps.PVLister == nil {
		f.deps.PVLister = f.deps.KubeInformerFactory.Core().V1().PersistentVolumes().Lister()
		f.c.control.pvs = f.deps.PVLister
	}
	tm := newMonitor()
	tm.Spec.Persistent = true
	policy := corev1.PersistentVolumeReclaimDelete
	tm.Spec.PVReclaimPolicy = &policy
	f.seed(tm)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "monitor-data-basic-monitor-0", Namespace: "ns",
			Labels: map[string]string{"app.kubernetes.io/name": "tidb-cluster", "app.kubernetes.io/managed-by": "tidb-operator",
				"app.kubernetes.io/instance": "basic", "app.kubernetes.io/component": "monitor"}},
		Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain}}
	if err := f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(pvc); err != nil {
		t.Fatal(err)
	}
	if err := f.deps.KubeInformerFactory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(pv); err != nil {
		t.Fatal(err)
	}
	if err := f.deps.FakeKube.Tracker().Add(pv); err != nil {
		t.Fatal(err)
	}
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatal(err)
	}
	got, err := f.deps.FakeKube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || got.Labels["app.kubernetes.io/instance"] != "basic" {
		t.Errorf("PV after sync: policy %s labels %v", got.Spec.PersistentVolumeReclaimPolicy, got.Labels)
	}
	if s := f.monitorStatus().DeploymentStorageStatus; s == nil || s.PvName != "pv-1" {
		t.Errorf("deploymentStorageStatus %+v", s)
	}
}

// TestValidateNamesTheBrokenField: the spec.storage of a persistent
// monitor must be a positive quantity (the schema leaves it a string), and
// a name too long for the StatefulSet names metadata.name.
func TestValidateNamesTheBrokenField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.TidbMonitor)
		want   string
	}{
		{"valid", func(*v1alpha1.TidbMonitor) {}, ""},
		{"storage not persistent", func(tm *v1alpha1.TidbMonitor) { tm.Spec.Storage = "lots" }, ""},
		{"storage garbage", func(tm *v1alpha1.TidbMonitor) { tm.Spec.Persistent, tm.Spec.Storage = true, "ten gigs" }, "spec.storage"},
		{"storage zero", func(tm *v1alpha1.TidbMonitor) { tm.Spec.Persistent, tm.Spec.Storage = true, "0" }, "spec.storage"},
		{"storage negative", func(tm *v1alpha1.TidbMonitor) { tm.Spec.Persistent, tm.Spec.Storage = true, "-1Gi" }, "spec.storage"},
		{"storage ok", func(tm *v1alpha1.TidbMonitor) { tm.Spec.Persistent, tm.Spec.Storage = true, "5Gi" }, ""},
		{"name too long", func(tm *v1alpha1.TidbMonitor) { tm.Name = strings.Repeat("a", 50) }, "metadata.name"},
		{"prometheus image", func(tm *v1alpha1.TidbMonitor) { tm.Spec.Prometheus.BaseImage = "prom/prom etheus:v1:v2" }, "spec.prometheus.baseImage"},
		{"grafana version", func(tm *v1alpha1.TidbMonitor) {
			tm.Spec.Grafana = &v1alpha1.GrafanaSpec{MonitorContainer: v1alpha1.MonitorContainer{BaseImage: "grafana/grafana", Version: "7.5.11:latest"}}
		}, "spec.grafana.version"},
	} {
		tm := newMonitor()
		tc.mutate(tm)
		got := Validate(tm)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Validate = %q, want a message naming %q", tc.name, got, tc.want)
		}
	}
}

// TestSyncWritesNothingForAnUnreadableStorage: such a monitor is reported
// invalid before anything is written.
func TestSyncWritesNothingForAnUnreadableStorage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newMonitor()
	tm.Spec.Persistent, tm.Spec.Storage = true, "ten gigs"
	f.seed(tm)
	if err := f.c.sync(context.Background(), "ns/basic"); !flow.IsIgnore(err) {
		t.Fatalf("want IgnoreError, got %v", err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("writes %v", w)
	}
	c := meta.FindStatusCondition(f.monitorStatus().Conditions, ConditionInvalid)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "spec.storage") {
		t.Fatalf("Invalid condition %+v", c)
	}
}

// TestSyncWritesNothingForObjectsTheAPIServerWouldRefuse: a negative
// memory limit or a toleration operator Maybe is found in the built
// StatefulSet before the ServiceAccount, ConfigMaps and Services are
// written, and reported invalid naming the built field.
func TestSyncWritesNothingForObjectsTheAPIServerWouldRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.TidbMonitor)
		want   string
	}{
		{"negative memory", func(tm *v1alpha1.TidbMonitor) {
			tm.Spec.Prometheus.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}
		}, "resources.limits[memory]"},
		{"toleration operator", func(tm *v1alpha1.TidbMonitor) {
			tm.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}}
		}, "spec.template.spec.tolerations[0].operator"},
	} {
		f := newFixture(t)
		tm := newMonitor()
		tc.mutate(tm)
		f.seed(tm)
		if err := f.c.sync(context.Background(), "ns/basic"); !flow.IsIgnore(err) {
			t.Fatalf("%s: want IgnoreError, got %v", tc.name, err)
		}
		if w := f.writes(); len(w) != 0 {
			t.Fatalf("%s: writes %v", tc.name, w)
		}
		c := meta.FindStatusCondition(f.monitorStatus().Conditions, ConditionInvalid)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, tc.want) {
			t.Fatalf("%s: Invalid condition %+v, want it naming %s", tc.name, c, tc.want)
		}
	}
}

// TestMissingGrafanaSecretWritesNothingUntilItExists: a usernameSecret
// that does not exist is reported (Warning SecretNotFound, Ready False
// naming it) with no object written and a look again later; once the
// Secret exists the monitor is built.
func TestMissingGrafanaSecretWritesNothingUntilItExists(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newMonitor()
	tm.Spec.Grafana = &v1alpha1.GrafanaSpec{MonitorContainer: v1alpha1.MonitorContainer{BaseImage: "grafana/grafana", Version: "7.5.11"},
		UsernameSecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "grafana"}, Key: "user"}}
	f.seed(tm)
	err := f.c.sync(context.Background(), "ns/basic")
	if re, ok := flow.AsRequeue(err); !ok || re.After != RecheckDelay {
		t.Fatalf("want a requeue after %s, got %v", RecheckDelay, err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("writes %v", w)
	}
	c := meta.FindStatusCondition(f.monitorStatus().Conditions, ConditionReady)
	if c == nil || c.Reason != ReasonSecretNotFound || !strings.Contains(c.Message, "spec.grafana.usernameSecret: Secret ns/grafana not found") {
		t.Fatalf("Ready condition %+v", c)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "grafana", Namespace: "ns"}, Data: map[string][]byte{"user": []byte("admin")}}
	if _, err := f.deps.FakeKube.CoreV1().Secrets("ns").Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.deps.FakeKube.ClearActions()
	if err := f.c.sync(context.Background(), "ns/basic"); err != nil {
		t.Fatalf("sync with the Secret: %v", err)
	}
	if w := f.writes(); len(w) == 0 {
		t.Fatal("nothing written once the Secret exists")
	}
}
