package pump

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// syncFixture runs Pump in the skeleton over a fake API server whose objects the test copies into the
// informer caches, with fake pumps, and TiKV registered as a peer whose phase the test sets.
type syncFixture struct {
	kube  *fake.Clientset
	inf   informers.SharedInformerFactory
	pumps *pumpapi.FakeClient
	rec   *record.FakeRecorder
	mgr   *component.Manager[*v1alpha1.TidbCluster]
}

// tikvPeer stands for the TiKV component: only its name, presence and status count to the skeleton.
type tikvPeer struct {
	component.Component[*v1alpha1.TidbCluster]
}

func (tikvPeer) Name() string                          { return names.TiKV }
func (tikvPeer) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiKV != nil }
func (tikvPeer) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.TiKV.ComponentStatus
}

func newSyncFixture() *syncFixture {
	kube := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(kube, 0)
	f := &syncFixture{kube: kube, inf: inf, pumps: pumpapi.NewFakeClient(), rec: record.NewFakeRecorder(100)}
	core, apps := inf.Core().V1(), inf.Apps().V1()
	env := &component.Env{
		Writer: apply.NewApplier(kube, f.rec, apply.Caches{Services: core.Services().Lister(),
			ConfigMaps: core.ConfigMaps().Lister(), StatefulSets: apps.StatefulSets().Lister()}),
		Kube: kube, StatefulSets: apps.StatefulSets().Lister(), Pods: core.Pods().Lister(),
		ConfigMaps: core.ConfigMaps().Lister(), PVCs: core.PersistentVolumeClaims().Lister(),
		Recorder: f.rec, Clock: clocktesting.NewFakePassiveClock(t0), Peers: &component.Peers{},
	}
	env.Peers.Add(tikvPeer{})
	f.mgr = component.NewManager(NewWithClient(env, f.pumps), env)
	return f
}

// syncTC is basicCluster with 3 pumps and PD available.
func syncTC(t *testing.T) *v1alpha1.TidbCluster {
	tc := golden.Cluster(t, basicCluster)
	tc.UID = "tc-uid"
	tc.Spec.Pump.Replicas = 3
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0": {Name: "basic-pd-0", Health: true}}
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	return tc
}

// seed copies what the fake API holds into the caches, gives the StatefulSet the status of revision
// rev (pods of the ordinals in old stay on "old"), makes every pod Ready with its pump container
// running since an hour before t0, and runs an online pump on each pod without one. The pods are
// created in the fake API too (without recording the writes), so that the operator can annotate them.
func (f *syncFixture) seed(t *testing.T, rev string, old map[int32]bool) {
	t.Helper()
	ctx := context.Background()
	svcs, _ := f.kube.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		must(t, f.inf.Core().V1().Services().Informer().GetIndexer().Update(&svcs.Items[i]))
	}
	cms, _ := f.kube.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
	for i := range cms.Items {
		must(t, f.inf.Core().V1().ConfigMaps().Informer().GetIndexer().Update(&cms.Items[i]))
	}
	sts := f.statefulSet(t)
	current := rev
	if len(old) > 0 {
		current = "old"
	}
	sts.Status = appsv1.StatefulSetStatus{Replicas: *sts.Spec.Replicas, ReadyReplicas: *sts.Spec.Replicas,
		CurrentRevision: current, UpdateRevision: rev, ObservedGeneration: sts.Generation}
	must(t, f.inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	for o := range *sts.Spec.Replicas {
		podRev := rev
		if old[o] {
			podRev = "old"
		}
		labels := map[string]string{appsv1.ControllerRevisionHashLabelKey: podRev}
		for k, v := range sts.Spec.Template.Labels {
			labels[k] = v
		}
		name := names.Pod("basic", names.Pump, o)
		pod, err := f.kube.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
			pod, err = f.kube.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{})
			must(t, err)
		}
		pod.Labels = labels
		pod.Status = corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: containerPump, State: corev1.ContainerState{
				Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(-time.Hour))}}}}}
		must(t, f.inf.Core().V1().Pods().Informer().GetIndexer().Update(pod))
		if _, ok := f.pumps.Pump("ns", "basic", name); !ok {
			f.pumps.SetPump("ns", "basic", name, pumpapi.FakePump{NodeID: name + ":8250", Host: name + ".basic-pump:8250", State: pumpapi.StateOnline})
		}
	}
	f.kube.ClearActions() // the pods stand for the StatefulSet controller's
}

func (f *syncFixture) statefulSet(t *testing.T) *appsv1.StatefulSet {
	t.Helper()
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-pump", metav1.GetOptions{})
	must(t, err)
	return sts
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// writes returns and clears the recorded writes, as "verb resource".
func (f *syncFixture) writes() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	f.kube.ClearActions()
	return out
}

// converged runs the first sync and a converged one, and clears the writes.
func (f *syncFixture) converged(t *testing.T, tc *v1alpha1.TidbCluster) {
	t.Helper()
	_ = f.mgr.Sync(context.Background(), tc)
	f.seed(t, "r1", nil)
	must(t, f.mgr.Sync(context.Background(), tc))
	f.writes()
}

// TestSyncCreatesThenConverges: the gate holds Pump until PD is available; the first sync creates the
// Service, ConfigMap and StatefulSet and waits; a converged cluster's sync writes nothing and reads the
// registry into status.
func TestSyncCreatesThenConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	tc := syncTC(t)
	tc.Status.PD = v1alpha1.PDStatus{}
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || len(f.writes()) != 0 {
		t.Fatalf("without PD: %v; want a wait and no write", err)
	}
	tc = syncTC(t)
	if err := f.mgr.Sync(ctx, tc); !waiting(err) {
		t.Fatalf("first sync: %v, want a wait for the pods", err)
	}
	want := []string{"create services", "create configmaps", "create statefulsets"}
	if got := f.writes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first sync wrote %v, want %v", got, want)
	}
	f.seed(t, "r1", nil)
	must(t, f.mgr.Sync(ctx, tc))
	if w := f.writes(); len(w) != 0 {
		t.Errorf("converged sync wrote %v", w)
	}
	if len(tc.Status.Pump.Members) != 3 || tc.Status.Pump.Phase != v1alpha1.NormalPhase {
		t.Errorf("status = %+v", tc.Status.Pump)
	}
	if ok, reason := Available(tc); !ok {
		t.Errorf("Available: %s", reason)
	}
}

// TestSyncScaleInThroughOffline: scale-in asks the highest pump to go offline and keeps its pod until
// the registry says offline; then the StatefulSet shrinks and the pod's PVC is marked for deferred
// deletion.
func TestSyncScaleInThroughOffline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	tc := syncTC(t)
	f.converged(t, tc)

	tc.Spec.Pump.Replicas = 2
	if err := f.mgr.Sync(ctx, tc); !waiting(err) {
		t.Fatalf("scale-in: %v, want a wait while the pump goes offline", err)
	}
	if got := f.writes(); fmt.Sprint(got) != "[patch pods]" {
		t.Errorf("scale-in wrote %v, want only the request time on the pod", got)
	}
	if *f.statefulSet(t).Spec.Replicas != 3 || tc.Status.Pump.Phase != v1alpha1.ScalePhase {
		t.Errorf("replicas %d, phase %s while the pump closes", *f.statefulSet(t).Spec.Replicas, tc.Status.Pump.Phase)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-basic-pump-2", Namespace: "ns"}}
	pvc, err := f.kube.CoreV1().PersistentVolumeClaims("ns").Create(ctx, pvc, metav1.CreateOptions{})
	must(t, err)
	must(t, f.inf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(pvc))
	f.writes()
	f.pumps.FinishOffline("ns", "basic", "basic-pump-2")
	must(t, f.mgr.Sync(ctx, tc))
	if *f.statefulSet(t).Spec.Replicas != 2 {
		t.Errorf("replicas %d once offline, want 2", *f.statefulSet(t).Spec.Replicas)
	}
	if got := f.writes(); fmt.Sprint(got) != "[patch persistentvolumeclaims update statefulsets]" {
		t.Errorf("release wrote %v, want the PVC marked and the StatefulSet shrunk", got)
	}
	pvc, err = f.kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data-basic-pump-2", metav1.GetOptions{})
	if must(t, err); pvc.Annotations[label.AnnPVCDeferDeleting] == "" {
		t.Errorf("PVC annotations %v, want defer-deleting", pvc.Annotations)
	}
	if offline := f.pumps.CallsOf(pumpapi.MethodOffline); len(offline) != 1 {
		t.Errorf("offline requests %+v, want one", offline)
	}
}

// TestSyncRolloutWaitsForTiKV: a new Pump version is not applied while TiKV upgrades; then it is
// applied at once with partition 0, and the StatefulSet rolls the pumps.
func TestSyncRolloutWaitsForTiKV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	tc := syncTC(t)
	f.converged(t, tc)

	tc.Spec.Pump.Version = ptrTo("v8.5.1")
	tc.Status.TiKV.Phase = v1alpha1.UpgradePhase
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || len(f.writes()) != 0 {
		t.Fatalf("while TiKV upgrades: %v; want a wait and no write", err)
	}
	tc.Status.TiKV.Phase = v1alpha1.NormalPhase
	must(t, f.mgr.Sync(ctx, tc))
	sts := f.statefulSet(t)
	if img := sts.Spec.Template.Spec.Containers[0].Image; img != "pingcap/tidb-binlog:v8.5.1" ||
		*sts.Spec.UpdateStrategy.RollingUpdate.Partition != 0 {
		t.Errorf("applied image %s partition %d, want v8.5.1 at 0", img, *sts.Spec.UpdateStrategy.RollingUpdate.Partition)
	}
	f.writes()
	f.seed(t, "r2", map[int32]bool{0: true, 1: true})
	if err := f.mgr.Sync(ctx, tc); err != nil || len(f.writes()) != 0 {
		t.Errorf("during the StatefulSet's rollout: %v; want nothing written", err)
	}
	if tc.Status.Pump.Phase != v1alpha1.UpgradePhase {
		t.Errorf("phase %s during the rollout", tc.Status.Pump.Phase)
	}
	if pod, _ := f.kube.CoreV1().Pods("ns").Get(ctx, "basic-pump-2", metav1.GetOptions{}); pod.Annotations[label.AnnPumpOfflineRequestedAt] != "" {
		t.Error("a rollout must not take pumps offline")
	}
}

func ptrTo[T any](v T) *T { return &v }
