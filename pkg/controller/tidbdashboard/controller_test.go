package tidbdashboard

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

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/workload"
	"github.com/kubetidb/tidb-operator/pkg/dashboard"
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

func newDashboard() *v1alpha1.TidbDashboard {
	return &v1alpha1.TidbDashboard{
		ObjectMeta: metav1.ObjectMeta{Name: "td", Namespace: "ns", UID: "td-uid", Generation: 1},
		Spec:       v1alpha1.TidbDashboardSpec{Clusters: []v1alpha1.TidbClusterRef{{Name: "basic"}}},
	}
}

func (f *fixture) seed(objs ...runtime.Object) {
	f.t.Helper()
	pc := f.deps.InformerFactory.Pingcap().V1alpha1()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1alpha1.TidbDashboard:
			err = pc.TidbDashboards().Informer().GetIndexer().Add(o)
			if err == nil {
				err = f.deps.FakePingcap.Tracker().Add(o.DeepCopy())
			}
		case *v1alpha1.TidbCluster:
			err = pc.TidbClusters().Informer().GetIndexer().Add(o)
		case *appsv1.StatefulSet:
			err = f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Add(o)
		case *corev1.Service:
			err = f.deps.KubeInformerFactory.Core().V1().Services().Informer().GetIndexer().Add(o)
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// refresh copies what the fake API server holds (status written, objects
// created) into the caches, as the informers would.
func (f *fixture) refresh() {
	f.t.Helper()
	ctx := context.Background()
	td, err := f.deps.Clientset.PingcapV1alpha1().TidbDashboards("ns").Get(ctx, "td", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.update(f.deps.InformerFactory.Pingcap().V1alpha1().TidbDashboards().Informer().GetIndexer().Update(td))
	sets, _ := f.deps.KubeClient.AppsV1().StatefulSets("ns").List(ctx, metav1.ListOptions{})
	for i := range sets.Items {
		f.update(f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(&sets.Items[i]))
	}
	svcs, _ := f.deps.KubeClient.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		f.update(f.deps.KubeInformerFactory.Core().V1().Services().Informer().GetIndexer().Update(&svcs.Items[i]))
	}
}

func (f *fixture) update(err error) {
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sync() error {
	f.deps.FakeKube.ClearActions()
	f.deps.FakePingcap.ClearActions()
	return f.c.Sync(context.Background(), "ns/td")
}

func (f *fixture) status() v1alpha1.TidbDashboardStatus {
	td, err := f.deps.Clientset.PingcapV1alpha1().TidbDashboards("ns").Get(context.Background(), "td", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return td.Status
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.deps.FakeRecorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// TestMissingClusterIsReportedOnceAndConvergesWhenItAppears: Ready False
// ClusterNotFound and one Warning; a second sync repeats neither; the
// cluster's arrival enqueues the dashboard, whose sync creates its objects.
func TestMissingClusterIsReportedOnceAndConvergesWhenItAppears(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seed(newDashboard())
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(f.status().Conditions, workload.ConditionReady)
	if c == nil || c.Reason != workload.ReasonClusterNotFound || c.Status != metav1.ConditionFalse {
		t.Fatalf("Ready = %+v", c)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "Warning ClusterNotFound") {
		t.Fatalf("events %v", ev)
	}
	f.refresh()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("second sync repeated events %v", ev)
	}
	if n := len(f.deps.FakePingcap.Actions()) + len(f.deps.FakeKube.Actions()); n > 0 {
		t.Errorf("second sync wrote: %v %v", f.deps.FakePingcap.Actions(), f.deps.FakeKube.Actions())
	}
	if keys := f.c.Dependents("ns", "basic"); len(keys) != 1 || keys[0] != "ns/td" {
		t.Errorf("dependents of basic = %v", keys)
	}
	f.seed(&v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(context.Background(), "td-tidb-dashboard", metav1.GetOptions{}); err != nil {
		t.Errorf("StatefulSet not created: %v", err)
	}
	if _, err := f.deps.KubeClient.CoreV1().Services("ns").Get(context.Background(), "td-tidb-dashboard-exposed", metav1.GetOptions{}); err != nil {
		t.Errorf("Service not created: %v", err)
	}
}

// TestReadyAndConvergedMakesNoWrites: once the StatefulSet is ready the
// dashboard is Ready and Normal, and a further sync makes no API write.
func TestReadyAndConvergedMakesNoWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seed(newDashboard(), &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("td-tidb-dashboard")
	if err != nil {
		t.Fatal(err)
	}
	sts = sts.DeepCopy()
	sts.Generation = 1
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, UpdatedReplicas: 1,
		CurrentRevision: "r1", UpdateRevision: "r1"}
	f.seed(sts)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	st := f.status()
	c := meta.FindStatusCondition(st.Conditions, workload.ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue || st.Phase != v1alpha1.NormalPhase || !st.Synced || st.StatefulSet == nil {
		t.Fatalf("status %+v", st)
	}
	f.refresh()
	f.seed(sts)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.deps.FakePingcap.Actions()) + len(f.deps.FakeKube.Actions()); n > 0 {
		t.Errorf("converged sync wrote: %v %v", f.deps.FakePingcap.Actions(), f.deps.FakeKube.Actions())
	}
}

// TestSuspendDeletesTheStatefulSet and reports the Suspend phase.
func TestSuspendDeletesTheStatefulSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.seed(newDashboard(), &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.refresh()
	td := newDashboard()
	td.Generation = 2
	td.Spec.SuspendAction = &v1alpha1.SuspendAction{SuspendStatefulSet: true}
	f.update(f.deps.InformerFactory.Pingcap().V1alpha1().TidbDashboards().Informer().GetIndexer().Update(td))
	_ = f.sync() // a wait for the deletion
	if _, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(context.Background(), "td-tidb-dashboard", metav1.GetOptions{}); err == nil {
		t.Error("StatefulSet still there")
	}
	if st := f.status(); st.Phase != v1alpha1.SuspendPhase {
		t.Errorf("phase %q", st.Phase)
	}
}

// TestUnsupportedAndInvalid: a second cluster is named in Unsupported with
// a Warning; an empty clusters list fails validation without a write but
// the status.
func TestUnsupportedAndInvalid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	td := newDashboard()
	td.Spec.Clusters = append(td.Spec.Clusters, v1alpha1.TidbClusterRef{Name: "second"})
	f.seed(td, &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(f.status().Conditions, workload.ConditionUnsupported)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "spec.clusters[1:]") {
		t.Errorf("Unsupported = %+v", c)
	}
	if ev := f.events(); len(ev) == 0 || !strings.Contains(strings.Join(ev, "\n"), "Warning Unsupported") {
		t.Errorf("events %v", ev)
	}

	g := newFixture(t)
	bad := newDashboard()
	bad.Spec.Clusters = nil
	g.seed(bad)
	if err := g.sync(); err == nil {
		t.Fatal("no error for a dashboard without clusters")
	}
	if c := meta.FindStatusCondition(g.status().Conditions, workload.ConditionReady); c == nil || c.Reason != workload.ReasonFailedValidation {
		t.Errorf("Ready = %+v", c)
	}
	if n := len(g.deps.FakeKube.Actions()); n != 0 {
		t.Errorf("invalid dashboard wrote %v", g.deps.FakeKube.Actions())
	}
}

// TestNegativeLimitAndLongNameWriteNothing: a negative memory limit, a
// name too long for the StatefulSet, a toleration operator Maybe or a
// nodeSelector key with a space is reported invalid before the Service is
// written (the API server would refuse only the StatefulSet).
func TestNegativeLimitAndLongNameWriteNothing(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(*v1alpha1.TidbDashboard){
		"negative limit": func(td *v1alpha1.TidbDashboard) {
			td.Spec.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}
		},
		"long name": func(td *v1alpha1.TidbDashboard) { td.Name = strings.Repeat("a", 40) },
		"toleration operator": func(td *v1alpha1.TidbDashboard) {
			td.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}}
		},
		"nodeSelector key": func(td *v1alpha1.TidbDashboard) { td.Spec.NodeSelector = map[string]string{"no spaces": "x"} },
	} {
		f := newFixture(t)
		td := newDashboard()
		mutate(td)
		f.seed(td, &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
		f.deps.FakeKube.ClearActions()
		if err := f.c.Sync(context.Background(), "ns/"+td.Name); err == nil {
			t.Errorf("%s: no error", name)
		}
		if n := len(f.deps.FakeKube.Actions()); n != 0 {
			t.Errorf("%s: wrote %v", name, f.deps.FakeKube.Actions())
		}
	}
}

// TestPVReclaimPolicy: the PV of the dashboard's bound PVC gets
// spec.pvReclaimPolicy and the operator's labels once; a PV already so is
// not written again.
func TestPVReclaimPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	td := newDashboard()
	policy := corev1.PersistentVolumeReclaimDelete
	td.Spec.PVReclaimPolicy = &policy
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-td-tidb-dashboard-0", Namespace: "ns", Labels: dashboard.PodLabels(td)},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain}}
	f.seed(td, &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}})
	core := f.deps.KubeInformerFactory.Core().V1()
	f.update(core.PersistentVolumeClaims().Informer().GetIndexer().Add(pvc))
	f.update(core.PersistentVolumes().Informer().GetIndexer().Add(pv))
	f.update(f.deps.FakeKube.Tracker().Add(pv.DeepCopy()))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	got, err := f.deps.KubeClient.CoreV1().PersistentVolumes().Get(context.Background(), "pv-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.PersistentVolumeReclaimPolicy != policy || got.Labels["app.kubernetes.io/instance"] != "td" ||
		got.Labels["app.kubernetes.io/component"] != "tidb-dashboard" {
		t.Fatalf("PV %+v %v", got.Spec.PersistentVolumeReclaimPolicy, got.Labels)
	}
	f.update(core.PersistentVolumes().Informer().GetIndexer().Update(got))
	f.refresh() // the caches show what the first sync created
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.deps.FakeKube.Actions() {
		if a.GetResource().Resource == "persistentvolumes" && a.GetVerb() == "patch" {
			t.Errorf("PV patched again: %v", a)
		}
	}
}
