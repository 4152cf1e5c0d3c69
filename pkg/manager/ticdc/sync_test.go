package ticdc

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// syncFixture runs TiCDC in the skeleton over a fake API server whose objects the test copies into
// the informer caches (seed), with a fake TiCDC.
type syncFixture struct {
	t    *testing.T
	kube *fake.Clientset
	inf  informers.SharedInformerFactory
	cdc  *ticdcapi.FakeClient
	mgr  *component.Manager[*v1alpha1.TidbCluster]
}

func newSyncFixture(t *testing.T) *syncFixture {
	kube := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(kube, 0)
	f := &syncFixture{t: t, kube: kube, inf: inf, cdc: ticdcapi.NewFakeClient()}
	core, apps := inf.Core().V1(), inf.Apps().V1()
	env := &component.Env{
		Writer: apply.NewApplier(kube, nil, apply.Caches{Services: core.Services().Lister(),
			ConfigMaps: core.ConfigMaps().Lister(), StatefulSets: apps.StatefulSets().Lister()}),
		Kube: kube, StatefulSets: apps.StatefulSets().Lister(), Pods: core.Pods().Lister(),
		ConfigMaps: core.ConfigMaps().Lister(), PVCs: core.PersistentVolumeClaims().Lister(),
		Clock: clocktesting.NewFakePassiveClock(t0), Recorder: record.NewFakeRecorder(100),
	}
	f.mgr = component.NewManager(NewWithClient(env, f.cdc), env)
	return f
}

// syncTC is basicCluster with PD and TiKV available.
func syncTC(t *testing.T) *v1alpha1.TidbCluster {
	tc := golden.Cluster(t, basicCluster)
	tc.UID = "tc-uid"
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0": {Name: "basic-pd-0", Health: true}}
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	tc.Status.TiKV.Stores = map[string]v1alpha1.TiKVStore{"1": {ID: "1", State: "Up"}}
	tc.Status.TiKV.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	return tc
}

func (f *syncFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// seed copies the Services and StatefulSet into the caches, gives the StatefulSet the status of
// revision rev everywhere but on the pods of the given ordinals (which stay on "old"), and creates or
// updates every pod, Ready, in the API server and the cache. A pod without a capture gets one.
func (f *syncFixture) seed(rev string, old map[int32]bool) {
	f.t.Helper()
	ctx := context.Background()
	svcs, _ := f.kube.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		f.must(f.inf.Core().V1().Services().Informer().GetIndexer().Update(&svcs.Items[i]))
	}
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(ctx, "basic-ticdc", metav1.GetOptions{})
	f.must(err)
	current := rev
	if len(old) > 0 {
		current = "old"
	}
	sts.Status = appsv1.StatefulSetStatus{Replicas: *sts.Spec.Replicas, ReadyReplicas: *sts.Spec.Replicas,
		CurrentRevision: current, UpdateRevision: rev, ObservedGeneration: sts.Generation}
	f.must(f.inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	for o := range *sts.Spec.Replicas {
		name := names.Pod("basic", names.TiCDC, o)
		pod, err := f.kube.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			pod, err = f.kube.CoreV1().Pods("ns").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}, metav1.CreateOptions{})
		}
		f.must(err)
		podRev := rev
		if old[o] {
			podRev = "old"
		}
		pod.Labels = map[string]string{appsv1.ControllerRevisionHashLabelKey: podRev}
		for k, v := range sts.Spec.Template.Labels {
			pod.Labels[k] = v
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		pod, err = f.kube.CoreV1().Pods("ns").Update(ctx, pod, metav1.UpdateOptions{})
		f.must(err)
		f.must(f.inf.Core().V1().Pods().Informer().GetIndexer().Update(pod))
		if _, ok := f.cdc.Captures("ns", "basic")[name]; !ok {
			f.cdc.SetCapture("ns", "basic", name, ticdcapi.FakeCapture{ID: fmt.Sprintf("c%d-%s", o, podRev), Version: "v8.5.0", Owner: o == 0})
		}
	}
	f.kube.ClearActions()
}

func (f *syncFixture) writes() []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range f.kube.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a)
		}
	}
	f.kube.ClearActions()
	return out
}

func (f *syncFixture) statefulSet() *appsv1.StatefulSet {
	f.t.Helper()
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-ticdc", metav1.GetOptions{})
	f.must(err)
	return sts
}

func waiting(err error) bool { _, ok := flow.AsRequeue(err); return ok }

// TestSyncCreatesThenConverges: TiCDC waits for TiKV; the first sync creates the peer Service and the
// StatefulSet (no ConfigMap without config) and waits; a converged cluster's sync writes nothing and
// reports every capture.
func TestSyncCreatesThenConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture(t)
	tc := syncTC(t)
	tc.Status.TiKV = v1alpha1.TiKVStatus{}
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || len(f.writes()) != 0 {
		t.Fatalf("without TiKV: %v; want a wait and no write", err)
	}
	tc = syncTC(t)
	if err := f.mgr.Sync(ctx, tc); !waiting(err) {
		t.Fatalf("first sync: %v, want a wait for the pods", err)
	}
	var created []string
	for _, a := range f.writes() {
		created = append(created, a.GetVerb()+" "+a.GetResource().Resource)
	}
	if want := "[create services create statefulsets]"; fmt.Sprint(created) != want {
		t.Fatalf("first sync wrote %v, want %s", created, want)
	}
	f.seed("r1", nil)
	f.must(f.mgr.Sync(ctx, tc))
	if w := f.writes(); len(w) != 0 {
		t.Errorf("converged sync wrote %v", w)
	}
	if s := tc.Status.TiCDC; !s.Synced || ReadyCaptures(tc) != 3 || s.Phase != v1alpha1.NormalPhase || !s.Captures["basic-ticdc-0"].IsOwner {
		t.Errorf("status = %+v", s)
	}
}

// TestSyncRollingUpgradeDrainsEachCapture: each capture is drained before its pod restarts, the owner
// resigns before being drained, and the next pod waits until the restarted capture is back.
func TestSyncRollingUpgradeDrainsEachCapture(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture(t)
	tc := syncTC(t)
	_ = f.mgr.Sync(ctx, tc)
	f.seed("r1", nil)
	f.must(f.mgr.Sync(ctx, tc))
	f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 4)
	f.cdc.SetTables("ns", "basic", "basic-ticdc-0", 2)

	tc.Spec.TiCDC.Version = ptrTo("v8.5.1")
	f.must(f.mgr.Sync(ctx, tc)) // the new template, partition kept
	f.seed("r2", map[int32]bool{0: true, 1: true, 2: true})
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || *f.statefulSet().Spec.UpdateStrategy.RollingUpdate.Partition != 3 {
		t.Fatalf("draining basic-ticdc-2: %v; want a wait at partition 3", err)
	}
	if pod, _ := f.kube.CoreV1().Pods("ns").Get(ctx, "basic-ticdc-2", metav1.GetOptions{}); pod.Annotations[label.AnnTiCDCGracefulShutdownBeginTime] == "" {
		t.Error("the drain's start is not on the pod")
	}
	f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 0)
	f.must(f.mgr.Sync(ctx, tc))
	if p := *f.statefulSet().Spec.UpdateStrategy.RollingUpdate.Partition; p != 2 {
		t.Fatalf("drained: partition %d, want 2", p)
	}

	// basic-ticdc-2 restarted on r2; its capture has not rejoined yet.
	f.seed("r2", map[int32]bool{0: true, 1: true})
	f.cdc.RemoveCapture("ns", "basic", "basic-ticdc-2")
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || *f.statefulSet().Spec.UpdateStrategy.RollingUpdate.Partition != 2 {
		t.Fatalf("capture not back: %v; want a wait at partition 2", err)
	}
	f.cdc.SetCapture("ns", "basic", "basic-ticdc-2", ticdcapi.FakeCapture{ID: "c2-new", Version: "v8.5.1"})
	f.must(f.mgr.Sync(ctx, tc)) // basic-ticdc-1 holds no table
	if p := *f.statefulSet().Spec.UpdateStrategy.RollingUpdate.Partition; p != 1 {
		t.Fatalf("capture back: partition %d, want 1", p)
	}

	// basic-ticdc-0 is the owner: it resigns, then is drained.
	f.seed("r2", map[int32]bool{0: true})
	if err := f.mgr.Sync(ctx, tc); !waiting(err) {
		t.Fatalf("owner: %v, want a wait while it hands the role over", err)
	}
	if f.cdc.Captures("ns", "basic")["basic-ticdc-0"].Owner || len(f.cdc.CallsOf(ticdcapi.MethodResignOwner)) != 1 {
		t.Fatal("the owner did not resign")
	}
	if err := f.mgr.Sync(ctx, tc); !waiting(err) {
		t.Fatalf("draining the former owner: %v, want a wait", err)
	}
	f.cdc.SetTables("ns", "basic", "basic-ticdc-0", 0)
	f.must(f.mgr.Sync(ctx, tc))
	if p := *f.statefulSet().Spec.UpdateStrategy.RollingUpdate.Partition; p != 0 {
		t.Fatalf("partition %d, want 0", p)
	}
}

// TestSyncScaleInDrainsFirst: the highest capture is drained before the StatefulSet shrinks.
func TestSyncScaleInDrainsFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture(t)
	tc := syncTC(t)
	_ = f.mgr.Sync(ctx, tc)
	f.seed("r1", nil)
	f.must(f.mgr.Sync(ctx, tc))
	f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 3)
	tc.Spec.TiCDC.Replicas = 2
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || *f.statefulSet().Spec.Replicas != 3 {
		t.Fatalf("draining: %v, replicas %d; want a wait at 3", err, *f.statefulSet().Spec.Replicas)
	}
	f.cdc.SetTables("ns", "basic", "basic-ticdc-2", 0)
	f.must(f.mgr.Sync(ctx, tc))
	if r := *f.statefulSet().Spec.Replicas; r != 2 || tc.Status.TiCDC.Phase != v1alpha1.ScalePhase {
		t.Errorf("replicas %d, phase %s; want 2 and Scale", r, tc.Status.TiCDC.Phase)
	}
}

func ptrTo[T any](v T) *T { return &v }
