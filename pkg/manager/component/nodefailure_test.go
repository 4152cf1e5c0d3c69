package component

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

func nodeFailureOver(t *testing.T, kube *kubefake.Clientset, rec record.EventRecorder) *NodeFailure {
	t.Helper()
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	if err := pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return NewNodeFailure(&Env{Kube: kube, Pods: corelisters.NewPodLister(pods), Recorder: rec,
		Clock: clocktesting.NewFakeClock(now), NodeFailure: NodeFailureConfig{Detect: true}})
}

// TestHostDownReadsEachNodeOncePerSync: the node is read by one GET per
// sync, however many records ask.
func TestHostDownReadsEachNodeOncePerSync(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}})
	n := nodeFailureOver(t, kube, record.NewFakeRecorder(5))
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	ctx := flow.WithMemo(context.Background())
	since := time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		reason, err := n.HostDown(ctx, tc, "p", since)
		if err != nil || reason != ReasonNodeFailure {
			t.Fatalf("HostDown = %q, %v; want NodeFailure", reason, err)
		}
	}
	if got := len(kube.Actions()); got != 1 {
		t.Fatalf("%d API calls, want one node GET", got)
	}
}

// TestHostDownWithoutNodePermission: a forbidden node read is a Warning
// naming the permission, and the host counts as up (the sync goes on); the
// Warning is emitted once per failure record, not on every sync.
func TestHostDownWithoutNodePermission(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset()
	kube.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n1", nil)
	})
	rec := record.NewFakeRecorder(5)
	n := nodeFailureOver(t, kube, rec)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	reason, err := n.HostDown(context.Background(), tc, "p", time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC))
	if err != nil || reason != "" {
		t.Fatalf("HostDown = %q, %v; want not down, no error", reason, err)
	}
	if e := <-rec.Events; !strings.Contains(e, "Warning "+ReasonFailedDetectNodeFailure) || !strings.Contains(e, "get on nodes") {
		t.Fatalf("event %q", e)
	}
	for range 3 { // later syncs of the same record
		if _, err := n.HostDown(flow.WithMemo(context.Background()), tc, "p", time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.Events) != 0 {
		t.Fatalf("the Warning repeated for the same failure record: %q", <-rec.Events)
	}
	if _, err := n.HostDown(context.Background(), tc, "p", time.Date(2025, 12, 31, 23, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 1 {
		t.Fatalf("a new failure record: %d Warnings, want 1", len(rec.Events))
	}
}

// deleteFixture is NodeFailure over caches holding the StatefulSet
// basic-tikv (claim template "tikv"), the pod basic-tikv-1 on node n1
// mounting its PVC tikv-basic-tikv-1 (UID "old") and the additionalVolumes
// PVC shared-nfs (UID "shared"), and the node with Ready condition ready
// (no node when ready is "").
func deleteFixture(t *testing.T, ready corev1.ConditionStatus, terminating bool) (*NodeFailure, *kubefake.Clientset, cache.Indexer) {
	t.Helper()
	claim := func(vol, name string) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-1", Namespace: "ns", UID: "pod-uid"},
		Spec: corev1.PodSpec{NodeName: "n1", Volumes: []corev1.Volume{claim("tikv", "tikv-basic-tikv-1"), claim("nfs", "shared-nfs")}}}
	if terminating {
		pod.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "tikv"}}}}}
	own := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tikv-basic-tikv-1", Namespace: "ns", UID: "old"}}
	shared := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared-nfs", Namespace: "ns", UID: "shared"}}
	objs := []runtime.Object{pod, own, shared}
	if ready != "" {
		objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}})
	}
	kube := kubefake.NewClientset(objs...)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pvcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	sets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, err := range []error{pods.Add(pod), pvcs.Add(own), pvcs.Add(shared), sets.Add(set)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	rec := record.NewFakeRecorder(20)
	n := NewNodeFailure(&Env{Kube: kube, Writer: apply.NewApplier(kube, rec, apply.Caches{}), Recorder: rec,
		Pods: corelisters.NewPodLister(pods), PVCs: corelisters.NewPersistentVolumeClaimLister(pvcs),
		StatefulSets: appslisters.NewStatefulSetLister(sets), Clock: clocktesting.NewFakeClock(time.Now())})
	kube.ClearActions()
	return n, kube, pvcs
}

// deletes lists the client's deletes as "resource/name" ("pods/name/0":
// grace period 0), failing on a pod deletion without the pod's UID.
func deletes(t *testing.T, kube *kubefake.Clientset) []string {
	t.Helper()
	var out []string
	for _, a := range kube.Actions() {
		d, ok := a.(k8stesting.DeleteActionImpl)
		if !ok {
			continue
		}
		w := d.GetResource().Resource + "/" + d.GetName()
		if g := d.DeleteOptions.GracePeriodSeconds; g != nil && *g == 0 {
			w += "/0"
		}
		if p := d.DeleteOptions.Preconditions; d.GetResource().Resource == "pods" && (p == nil || p.UID == nil || *p.UID != "pod-uid") {
			t.Errorf("pod deleted without its UID precondition: %+v", d.DeleteOptions)
		}
		out = append(out, w)
	}
	return out
}

var recorded = map[types.UID]v1alpha1.EmptyStruct{"old": {}, "shared": {}}

// TestPVCUIDsKeepsOnlyTheMembersClaims: a failure record keeps the UID of
// the claim template's PVC, not that of a PVC of additionalVolumes.
func TestPVCUIDsKeepsOnlyTheMembersClaims(t *testing.T) {
	t.Parallel()
	n, _, _ := deleteFixture(t, corev1.ConditionTrue, false)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	got := n.PVCUIDs(tc, "basic-tikv-1")
	if _, ok := got["old"]; !ok || len(got) != 1 {
		t.Fatalf("PVCUIDs = %v, want only the member's PVC old", got)
	}
}

// TestDeletePodAndPVCsForcesOnlyWhenNothingWouldFinish: the member's own
// recorded PVC goes (never the shared one, though the record names it);
// the pod goes at once only on a NotReady, Unknown or missing node or when
// already Terminating, otherwise gracefully, always under its UID.
func TestDeletePodAndPVCsForcesOnlyWhenNothingWouldFinish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ready       corev1.ConditionStatus
		terminating bool
		pod         string
	}{
		{corev1.ConditionTrue, false, "pods/basic-tikv-1"},
		{corev1.ConditionFalse, false, "pods/basic-tikv-1/0"},
		{corev1.ConditionUnknown, false, "pods/basic-tikv-1/0"},
		{"", false, "pods/basic-tikv-1/0"},
		{corev1.ConditionTrue, true, "pods/basic-tikv-1/0"},
	} {
		n, kube, _ := deleteFixture(t, c.ready, c.terminating)
		tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
		if kept, err := n.DeletePodAndPVCs(context.Background(), tc, "basic-tikv-1", recorded, "test"); err != nil || kept {
			t.Fatalf("DeletePodAndPVCs = %v, %v; want deleted", kept, err)
		}
		want := "persistentvolumeclaims/tikv-basic-tikv-1," + c.pod
		if got := strings.Join(deletes(t, kube), ","); got != want {
			t.Errorf("node %q terminating %v: deletes %s, want %s", c.ready, c.terminating, got, want)
		}
	}
}

// TestDeletePodAndPVCsLeavesANewMemberAlone: when the ordinal already came
// back on a new PVC, nothing is deleted and a Normal event says why.
func TestDeletePodAndPVCsLeavesANewMemberAlone(t *testing.T) {
	t.Parallel()
	n, kube, pvcs := deleteFixture(t, corev1.ConditionTrue, false)
	if err := pvcs.Update(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "tikv-basic-tikv-1", Namespace: "ns", UID: "new"}}); err != nil {
		t.Fatal(err)
	}
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	if kept, err := n.DeletePodAndPVCs(context.Background(), tc, "basic-tikv-1", recorded, "test"); err != nil || !kept {
		t.Fatalf("DeletePodAndPVCs = %v, %v; want the pod kept", kept, err)
	}
	if d := deletes(t, kube); len(d) != 0 {
		t.Fatalf("a new member: deleted %v", d)
	}
	if e := <-n.recorder.(*record.FakeRecorder).Events; !strings.Contains(e, "Normal "+ReasonHostDownPodKept) {
		t.Fatalf("event %q", e)
	}
}
