package store

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var hostKind = Kind{
	Component: "tikv",
	Status:    func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiKV },
	Spec: func(tc *v1alpha1.TidbCluster) Spec {
		return Spec{Replicas: tc.Spec.TiKV.Replicas, MaxFailoverCount: tc.Spec.TiKV.MaxFailoverCount}
	},
	NotUpReason: "TiKVStoreNotUp", Label: "TiKV",
}

var hostNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const pvcUID = types.UID("pvc-uid-1")

// sharedUID is the UID of the PVC "shared-nfs" every pod mounts from
// additionalVolumes; the fixture's record holds it too (as records written
// before PVCUIDs kept only the member's own PVCs did): it is never deleted.
const sharedUID = types.UID("shared-uid")

// hostFixture is a TiKV lifecycle over fakes: the failed store 21 of
// basic-tikv-1 on node n1, recorded an hour ago with its PVC, three other
// stores Up, and the pod, PVC and node in both the caches and the client.
type hostFixture struct {
	l        *Lifecycle
	tc       *v1alpha1.TidbCluster
	kube     *kubefake.Clientset
	ctl      *pdapi.FakeControl
	pods     cache.Indexer
	pvcs     cache.Indexer
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
}

func newHostFixture(t *testing.T, detect bool, node *corev1.Node, pod *corev1.Pod) *hostFixture {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tikv-basic-tikv-1", Namespace: "ns", UID: pvcUID}}
	shared := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared-nfs", Namespace: "ns", UID: sharedUID}}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "tikv"}}}}}
	kube := kubefake.NewClientset(node, pod, pvc, shared)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pvcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	sets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, add := range []error{pods.Add(pod), pvcs.Add(pvc), pvcs.Add(shared), sets.Add(set)} {
		if add != nil {
			t.Fatal(add)
		}
	}
	rec := record.NewFakeRecorder(50)
	clk := clocktesting.NewFakeClock(hostNow)
	ctl := pdapi.NewFakeControl()
	env := &component.Env{
		Writer: apply.NewApplier(kube, rec, apply.Caches{}), Kube: kube, PD: ctl, Recorder: rec, Clock: clk,
		Pods: corelisters.NewPodLister(pods), PVCs: corelisters.NewPersistentVolumeClaimLister(pvcs),
		StatefulSets: appslisters.NewStatefulSetLister(sets), AutoFailover: true, FailoverPeriods: map[string]time.Duration{"tikv": time.Minute},
		NodeFailure: component.NodeFailureConfig{Detect: detect, HardRecoveryPeriod: 24 * time.Hour, RestartGap: 10 * time.Minute},
	}
	one := int32(1)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{Replicas: 3, MaxFailoverCount: &one}
	stores := upStores("basic-tikv-0", "basic-tikv-2", "basic-tikv-3")
	stores["21"] = v1alpha1.TiKVStore{ID: "21", PodName: "basic-tikv-1", State: pdapi.StoreStateNameDown,
		LastTransitionTime: metav1.NewTime(hostNow.Add(-2 * time.Hour))}
	tc.Status.TiKV = v1alpha1.TiKVStatus{Synced: true, Stores: stores, FailureStores: map[string]v1alpha1.TiKVFailureStore{
		"21": {PodName: "basic-tikv-1", StoreID: "21", CreatedAt: metav1.NewTime(hostNow.Add(-time.Hour)),
			PVCUIDSet: map[types.UID]v1alpha1.EmptyStruct{pvcUID: {}, sharedUID: {}}},
	}}
	kube.ClearActions()
	return &hostFixture{l: New(hostKind, env), tc: tc, kube: kube, ctl: ctl, pods: pods, pvcs: pvcs, clock: clk, recorder: rec}
}

func testNode(conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: conds}}
}

func nodeReady(s corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: s}
}

func testPod(ready bool, phase corev1.PodPhase, created time.Time) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-1", Namespace: "ns", UID: "pod-uid-" + types.UID(created.Format("150405")),
			CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PodSpec{NodeName: "n1", Volumes: []corev1.Volume{{Name: "tikv", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "tikv-basic-tikv-1"}}},
			{Name: "nfs", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared-nfs"}}}}},
		Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func (f *hostFixture) events() string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

// writes lists the client's writes as "verb resource" and PD's writes by method.
func (f *hostFixture) writes() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	for _, c := range f.ctl.ClusterClient("ns", "basic").WriteCalls() {
		out = append(out, "pd "+string(c.Method))
	}
	f.kube.ClearActions()
	f.ctl.ClusterClient("ns", "basic").ResetCalls()
	return out
}

// TestHostDownMarking: each reason of spec §8.4 marks the record host-down
// with a Warning naming it; nothing marks without --detect-node-failure,
// without a recorded PVC, or once the store is Up again.
func TestHostDownMarking(t *testing.T) {
	t.Parallel()
	old := hostNow.Add(-3 * time.Hour)
	cases := []struct {
		name   string
		detect bool
		node   *corev1.Node
		pod    *corev1.Pod
		setup  func(*v1alpha1.TidbCluster)
		want   string // event reason, "" for not marked
	}{
		{"pod NotReady on a NotReady node", true, testNode(nodeReady(corev1.ConditionFalse)), testPod(false, corev1.PodRunning, old), nil, component.ReasonNodeFailure},
		{"pod NotReady on an Unknown node", true, testNode(nodeReady(corev1.ConditionUnknown)), testPod(false, corev1.PodRunning, old), nil, component.ReasonNodeFailure},
		{"pod phase Unknown", true, testNode(nodeReady(corev1.ConditionTrue)), testPod(true, corev1.PodUnknown, old), nil, component.ReasonNodeFailure},
		{"node RODiskFound", true, testNode(nodeReady(corev1.ConditionTrue), corev1.NodeCondition{Type: "RODiskFound", Status: corev1.ConditionTrue}),
			testPod(true, corev1.PodRunning, old), nil, component.ReasonRODiskFound},
		{"failure older than the hard recovery period", true, testNode(nodeReady(corev1.ConditionTrue)), testPod(true, corev1.PodRunning, old),
			func(tc *v1alpha1.TidbCluster) {
				f := tc.Status.TiKV.FailureStores["21"]
				f.CreatedAt = metav1.NewTime(hostNow.Add(-25 * time.Hour))
				tc.Status.TiKV.FailureStores["21"] = f
			}, component.ReasonStoreDownTimeExceeded},
		{"pod NotReady on a Ready node", true, testNode(nodeReady(corev1.ConditionTrue)), testPod(false, corev1.PodRunning, old), nil, ""},
		{"pod Ready on a NotReady node", true, testNode(nodeReady(corev1.ConditionFalse)), testPod(true, corev1.PodRunning, old), nil, ""},
		{"flag off", false, testNode(nodeReady(corev1.ConditionUnknown)), testPod(false, corev1.PodRunning, old), nil, ""},
		{"no PVC recorded", true, testNode(nodeReady(corev1.ConditionUnknown)), testPod(false, corev1.PodRunning, old),
			func(tc *v1alpha1.TidbCluster) {
				f := tc.Status.TiKV.FailureStores["21"]
				f.PVCUIDSet = nil
				tc.Status.TiKV.FailureStores["21"] = f
			}, ""},
		{"store Up again", true, testNode(nodeReady(corev1.ConditionUnknown)), testPod(false, corev1.PodRunning, old),
			func(tc *v1alpha1.TidbCluster) {
				s := tc.Status.TiKV.Stores["21"]
				s.State = pdapi.StoreStateNameUp
				tc.Status.TiKV.Stores["21"] = s
			}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newHostFixture(t, c.detect, c.node, c.pod)
			if c.setup != nil {
				c.setup(f.tc)
			}
			if err := f.l.Failover(context.Background(), f.tc); err != nil {
				t.Fatalf("Failover: %v", err)
			}
			got := f.tc.Status.TiKV.FailureStores["21"].HostDown
			events := f.events()
			if got != (c.want != "") {
				t.Fatalf("hostDown = %v, want marked by %q; events:\n%s", got, c.want, events)
			}
			if c.want != "" && !strings.Contains(events, "Warning "+c.want+" ") {
				t.Errorf("want a Warning %s event, got:\n%s", c.want, events)
			}
			if w := f.writes(); len(w) != 0 {
				t.Errorf("marking (no annotation) wrote %v", w)
			}
		})
	}
}

// TestHostDownAutoRecoveryOrder: with the annotation the host-down store's
// pod is force-deleted first; the store is deleted in PD only once the new
// pod ran for the restart gap; the PVC and pod go only once PD reports the
// store Tombstone; then the record is converged and nothing is written.
func TestHostDownAutoRecoveryOrder(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t, true, testNode(nodeReady(corev1.ConditionUnknown)), testPod(false, corev1.PodRunning, hostNow.Add(-3*time.Hour)))
	f.tc.Annotations = map[string]string{label.AnnAutoFailureRecovery: "true"}
	ctx := context.Background()
	err := f.l.Failover(ctx, f.tc)
	if _, wait := flow.AsRequeue(err); !wait {
		t.Fatalf("force-deleting the pod should wait, got %v", err)
	}
	if !f.tc.Status.TiKV.FailureStores["21"].HostDown {
		t.Fatal("the record was not marked host-down")
	}
	assertForceDelete(t, f.kube.Actions())
	if w := f.writes(); len(w) != 1 || w[0] != "delete pods" {
		t.Fatalf("step 1 wrote %v, want only the pod's deletion", w)
	}

	// The StatefulSet recreated the pod a minute ago: the store waits for the gap.
	recreated := testPod(false, corev1.PodRunning, hostNow.Add(-time.Minute))
	if err := f.pods.Update(recreated); err != nil {
		t.Fatal(err)
	}
	revCtx, revisits := flow.WithRevisits(ctx)
	if err := f.l.Failover(revCtx, f.tc); err != nil {
		t.Fatalf("waiting for the gap: %v", err)
	}
	if revisits.Err() == nil {
		t.Error("waiting for the restart gap should ask for a revisit")
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("before the gap wrote %v", w)
	}

	f.clock.Step(10 * time.Minute)
	if err := f.l.Failover(ctx, f.tc); !isWait(err) {
		t.Fatalf("deleting the store should wait for Tombstone, got %v", err)
	}
	if w := f.writes(); len(w) != 1 || w[0] != "pd "+string(pdapi.MethodDeleteStore) {
		t.Fatalf("after the gap wrote %v, want only the store's deletion in PD; events %s", w, f.events())
	}
	if !strings.Contains(f.events(), "Normal Recovery ") {
		t.Error("want a Recovery event for the store's deletion")
	}
	// Offline (PD moves the data away): nothing is deleted yet.
	if _, wait := flow.AsRequeue(f.l.Failover(ctx, f.tc)); !wait {
		t.Fatal("an Offline store should wait")
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("while Offline wrote %v", w)
	}

	s := &f.tc.Status.TiKV
	s.TombstoneStores = map[string]v1alpha1.TiKVStore{"21": {ID: "21", PodName: "basic-tikv-1", State: pdapi.StoreStateNameTombstone}}
	delete(s.Stores, "21")
	if err := f.l.Failover(ctx, f.tc); err != nil {
		t.Fatalf("at Tombstone: %v", err)
	}
	assertDeletedPVCs(t, f.kube.Actions(), "tikv-basic-tikv-1")
	assertForceDelete(t, f.kube.Actions()) // its node is Unknown
	if w := f.writes(); len(w) != 2 || w[0] != "delete persistentvolumeclaims" || w[1] != "delete pods" {
		t.Fatalf("at Tombstone wrote %v, want the PVC then the pod deleted", w)
	}
	if !s.FailureStores["21"].StoreDeleted {
		t.Fatal("storeDeleted not set")
	}
	if err := f.l.Failover(ctx, f.tc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("a converged record wrote %v", w)
	}
}

func assertForceDelete(t *testing.T, actions []k8stesting.Action) {
	t.Helper()
	for _, a := range actions {
		d, ok := a.(k8stesting.DeleteActionImpl)
		if !ok || d.GetResource().Resource != "pods" {
			continue
		}
		if g := d.DeleteOptions.GracePeriodSeconds; g == nil || *g != 0 || d.DeleteOptions.Preconditions == nil {
			t.Errorf("pod deleted with %+v, want grace period 0 and a UID precondition", d.DeleteOptions)
		}
		return
	}
	t.Error("the pod was not deleted")
}

// TestHostDownWithoutAnnotationDeletesNothing: a host-down record without
// auto-failure-recovery (or with it set to anything but "true") deletes no
// pod, store or PVC, even at Tombstone.
func TestHostDownWithoutAnnotationDeletesNothing(t *testing.T) {
	t.Parallel()
	for _, ann := range []map[string]string{nil, {label.AnnAutoFailureRecovery: "false"}} {
		f := newHostFixture(t, true, testNode(nodeReady(corev1.ConditionUnknown)), testPod(false, corev1.PodRunning, hostNow.Add(-3*time.Hour)))
		f.tc.Annotations = ann
		for i := 0; i < 3; i++ {
			f.clock.Step(time.Hour)
			if err := f.l.Failover(context.Background(), f.tc); err != nil {
				t.Fatal(err)
			}
		}
		if !f.tc.Status.TiKV.FailureStores["21"].HostDown {
			t.Fatal("not marked host-down")
		}
		if w := f.writes(); len(w) != 0 {
			t.Fatalf("annotation %v: wrote %v", ann, w)
		}
	}
}

// TestHostDownStoreUpAfterRestartIsKept: a restarted store that comes back
// Up is not deleted, however long it ran.
func TestHostDownStoreUpAfterRestartIsKept(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t, true, testNode(nodeReady(corev1.ConditionTrue)), testPod(true, corev1.PodRunning, hostNow.Add(-30*time.Minute)))
	f.tc.Annotations = map[string]string{label.AnnAutoFailureRecovery: "true"}
	rec := f.tc.Status.TiKV.FailureStores["21"]
	rec.HostDown = true
	f.tc.Status.TiKV.FailureStores["21"] = rec
	st := f.tc.Status.TiKV.Stores["21"]
	st.State = pdapi.StoreStateNameUp
	f.tc.Status.TiKV.Stores["21"] = st
	if err := f.l.Failover(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("an Up store's record wrote %v", w)
	}
}

// TestFailureRecordKeepsPVCs: a store recorded as failed keeps the UIDs of
// its pod's PVCs, which host-down marking requires.
func TestFailureRecordKeepsPVCs(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t, false, testNode(nodeReady(corev1.ConditionTrue)), testPod(true, corev1.PodRunning, hostNow.Add(-3*time.Hour)))
	f.tc.Status.TiKV.FailureStores = nil
	if err := f.l.Failover(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	r, ok := f.tc.Status.TiKV.FailureStores["21"]
	if _, has := r.PVCUIDSet[pvcUID]; !ok || !has {
		t.Fatalf("record %+v lacks the PVC %s", r, pvcUID)
	}
	if _, has := r.PVCUIDSet[sharedUID]; has || len(r.PVCUIDSet) != 1 {
		t.Fatalf("record %+v keeps the additionalVolumes PVC shared-nfs", r)
	}
}

// assertDeletedPVCs: the client deleted exactly the PVCs named want.
func assertDeletedPVCs(t *testing.T, actions []k8stesting.Action, want ...string) {
	t.Helper()
	var got []string
	for _, a := range actions {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.GetResource().Resource == "persistentvolumeclaims" {
			got = append(got, d.GetName())
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("deleted PVCs %v, want %v", got, want)
	}
}

// tombstoneFixture is a host-down record with auto-failure-recovery whose
// store PD reports Tombstone, its node's Ready condition ready.
func tombstoneFixture(t *testing.T, ready corev1.ConditionStatus, pod *corev1.Pod) *hostFixture {
	t.Helper()
	f := newHostFixture(t, true, testNode(nodeReady(ready)), pod)
	f.tc.Annotations = map[string]string{label.AnnAutoFailureRecovery: "true"}
	s := &f.tc.Status.TiKV
	rec := s.FailureStores["21"]
	rec.HostDown = true
	s.FailureStores["21"] = rec
	delete(s.Stores, "21")
	s.TombstoneStores = map[string]v1alpha1.TiKVStore{"21": {ID: "21", PodName: "basic-tikv-1", State: pdapi.StoreStateNameTombstone}}
	return f
}

// TestHostDownTombstoneDeletesARunningPodGracefully: the restarted pod on
// a Ready node is deleted with its grace period and a UID precondition,
// never at once (its container may still run).
func TestHostDownTombstoneDeletesARunningPodGracefully(t *testing.T) {
	t.Parallel()
	f := tombstoneFixture(t, corev1.ConditionTrue, testPod(false, corev1.PodRunning, hostNow.Add(-30*time.Minute)))
	if err := f.l.Failover(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	assertDeletedPVCs(t, f.kube.Actions(), "tikv-basic-tikv-1")
	var pod *k8stesting.DeleteActionImpl
	for _, a := range f.kube.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.GetResource().Resource == "pods" {
			pod = &d
		}
	}
	if pod == nil || pod.DeleteOptions.GracePeriodSeconds != nil || pod.DeleteOptions.Preconditions == nil ||
		pod.DeleteOptions.Preconditions.UID == nil || *pod.DeleteOptions.Preconditions.UID != "pod-uid-"+types.UID(hostNow.Add(-30*time.Minute).Format("150405")) {
		t.Fatalf("pod deletion %+v, want a graceful one under the pod's UID", pod)
	}
	if !f.tc.Status.TiKV.FailureStores["21"].StoreDeleted {
		t.Fatal("storeDeleted not set")
	}
}

// TestHostDownTombstoneLeavesANewMemberAlone: an ordinal already back with
// a new store on a new PVC keeps its pod; the record is done, and the
// StoreTombstone event says the pod was kept (nothing deleted).
func TestHostDownTombstoneLeavesANewMemberAlone(t *testing.T) {
	t.Parallel()
	f := tombstoneFixture(t, corev1.ConditionTrue, testPod(true, corev1.PodRunning, hostNow.Add(-5*time.Minute)))
	fresh := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tikv-basic-tikv-1", Namespace: "ns", UID: "pvc-uid-2"}}
	if err := f.pvcs.Update(fresh); err != nil {
		t.Fatal(err)
	}
	if err := f.l.Failover(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("a new member's pod: wrote %v", w)
	}
	if !f.tc.Status.TiKV.FailureStores["21"].StoreDeleted {
		t.Fatal("storeDeleted not set")
	}
	e := f.events()
	if !strings.Contains(e, "Normal "+component.ReasonHostDownPodKept) {
		t.Fatalf("events %s", e)
	}
	for _, line := range strings.Split(e, "\n") {
		if strings.Contains(line, ReasonStoreTombstone) && (strings.Contains(line, "deleted") || !strings.Contains(line, "kept")) {
			t.Fatalf("StoreTombstone event %q, want it to say the pod was kept", line)
		}
	}
	if !strings.Contains(e, ReasonStoreTombstone) {
		t.Fatalf("events %s, want StoreTombstone", e)
	}
}

func isWait(err error) bool {
	_, ok := flow.AsRequeue(err)
	return ok
}
