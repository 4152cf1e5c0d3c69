package pd

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

type pdHostFixture struct {
	c     *Component
	tc    *v1alpha1.TidbCluster
	kube  *kubefake.Clientset
	ctl   *pdapi.FakeControl
	pods  cache.Indexer
	clock *clocktesting.FakeClock
	rec   *record.FakeRecorder
}

var pdHostNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// newPDHostFixture is a three-member PD whose basic-pd-1 is unhealthy and
// recorded as failed an hour ago with its PVC, its pod NotReady on node n1
// (Ready condition nodeReady), created at podCreated.
func newPDHostFixture(t *testing.T, detect bool, nodeReady corev1.ConditionStatus, podCreated time.Time) *pdHostFixture {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: nodeReady}}}}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pd-basic-pd-1", Namespace: "ns", UID: "pvc-1"}}
	shared := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "shared-nfs", Namespace: "ns", UID: "shared"}}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "pd"}}}}}
	pod := pdPod(podCreated)
	kube := kubefake.NewClientset(node, pvc, shared, pod)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pvcs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	sets := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, add := range []error{pods.Add(pod), pvcs.Add(pvc), pvcs.Add(shared), sets.Add(set)} {
		if add != nil {
			t.Fatal(add)
		}
	}
	rec := record.NewFakeRecorder(50)
	clk := clocktesting.NewFakeClock(pdHostNow)
	ctl := pdapi.NewFakeControl()
	env := &component.Env{Writer: apply.NewApplier(kube, rec, apply.Caches{}), Kube: kube, Recorder: rec, Clock: clk,
		Pods: corelisters.NewPodLister(pods), PVCs: corelisters.NewPersistentVolumeClaimLister(pvcs),
		StatefulSets: appslisters.NewStatefulSetLister(sets), NodeFailure: component.NodeFailureConfig{Detect: detect, RestartGap: 10 * time.Minute}}
	c := &Component{pd: ctl, clock: clk, failover: component.FailoverConfig{Enabled: true, Period: time.Minute},
		writer: env.Writer, recorder: rec, hosts: component.NewNodeFailure(env)}
	tc := membersTC([]bool{true, false, true}, pdHostNow.Add(-2*time.Hour))
	tc.Status.PD.FailureMembers = map[string]v1alpha1.PDFailureMember{"basic-pd-1": {PodName: "basic-pd-1", MemberID: "11",
		CreatedAt: metav1.NewTime(pdHostNow.Add(-time.Hour)), PVCUIDSet: map[types.UID]v1alpha1.EmptyStruct{"pvc-1": {}, "shared": {}}}}
	kube.ClearActions()
	return &pdHostFixture{c: c, tc: tc, kube: kube, ctl: ctl, pods: pods, clock: clk, rec: rec}
}

func pdPod(created time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-1", Namespace: "ns", UID: types.UID("pod-" + created.Format("150405")),
			CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PodSpec{NodeName: "n1", Volumes: []corev1.Volume{{Name: "pd", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pd-basic-pd-1"}}},
			{Name: "nfs", VolumeSource: corev1.VolumeSource{ // additionalVolumes: shared by every pod
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared-nfs"}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	}
}

// writes lists the deletes of the client ("pods/0": grace period 0) and
// PD's writes, and forgets them.
func (f *pdHostFixture) writes() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		d, ok := a.(k8stesting.DeleteActionImpl)
		if !ok {
			continue
		}
		w := d.GetResource().Resource
		if g := d.DeleteOptions.GracePeriodSeconds; g != nil && *g == 0 {
			w += "/0"
		}
		out = append(out, w)
	}
	for _, c := range f.ctl.ClusterClient("ns", "basic").WriteCalls() {
		out = append(out, "pd "+string(c.Method))
	}
	f.kube.ClearActions()
	f.ctl.ClusterClient("ns", "basic").ResetCalls()
	return out
}

// TestPDHostDownForceDeletesWithTheMember: without the annotation a
// host-down member is deleted as before, but its recorded PVC and its pod
// go at once (grace period 0), since no kubelet would finish the deletion.
func TestPDHostDownForceDeletesWithTheMember(t *testing.T) {
	t.Parallel()
	f := newPDHostFixture(t, true, corev1.ConditionUnknown, pdHostNow.Add(-3*time.Hour))
	if err := f.c.Failover(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	m := f.tc.Status.PD.FailureMembers["basic-pd-1"]
	if !m.HostDown || !m.MemberDeleted {
		t.Fatalf("record %+v, want host-down and deleted", m)
	}
	if w := strings.Join(f.writes(), ","); w != "persistentvolumeclaims,pods/0,pd "+string(pdapi.MethodDeleteMemberByID) {
		t.Fatalf("writes %s", w)
	}
}

// TestPDHostDownNotMarkedWithoutTheFlag: without --detect-node-failure the
// record is not marked and the pod is deleted gracefully, as before.
func TestPDHostDownNotMarkedWithoutTheFlag(t *testing.T) {
	t.Parallel()
	f := newPDHostFixture(t, false, corev1.ConditionUnknown, pdHostNow.Add(-3*time.Hour))
	if err := f.c.Failover(context.Background(), f.tc); err != nil {
		t.Fatal(err)
	}
	if f.tc.Status.PD.FailureMembers["basic-pd-1"].HostDown {
		t.Fatal("marked host-down without the flag")
	}
	if w := strings.Join(f.writes(), ","); w != "persistentvolumeclaims,pods,pd "+string(pdapi.MethodDeleteMemberByID) {
		t.Fatalf("writes %s", w)
	}
}

// TestPDHostDownAutoRecoveryRestartsFirst: with the annotation the pod is
// force-deleted first, the member waits for the restarted pod's gap, and
// is then deleted (if still unhealthy) with its PVC.
func TestPDHostDownAutoRecoveryRestartsFirst(t *testing.T) {
	t.Parallel()
	f := newPDHostFixture(t, true, corev1.ConditionUnknown, pdHostNow.Add(-3*time.Hour))
	f.tc.Annotations = map[string]string{label.AnnAutoFailureRecovery: "true"}
	ctx := context.Background()
	if _, wait := flow.AsRequeue(f.c.Failover(ctx, f.tc)); !wait {
		t.Fatal("the restart should wait")
	}
	if w := strings.Join(f.writes(), ","); w != "pods/0" {
		t.Fatalf("step 1 writes %s, want only the pod force-deleted", w)
	}
	if err := f.pods.Update(pdPod(pdHostNow.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Failover(ctx, f.tc); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("before the gap wrote %v", w)
	}
	f.clock.Step(10 * time.Minute)
	if err := f.c.Failover(ctx, f.tc); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(f.writes(), ","); w != "persistentvolumeclaims,pods/0,pd "+string(pdapi.MethodDeleteMemberByID) {
		t.Fatalf("after the gap writes %s", w)
	}
}

// TestPDHostDownKeepsQuorum: without a healthy quorum the member is marked
// host-down but neither it nor its data is deleted.
func TestPDHostDownKeepsQuorum(t *testing.T) {
	t.Parallel()
	f := newPDHostFixture(t, true, corev1.ConditionFalse, pdHostNow.Add(-3*time.Hour))
	m := f.tc.Status.PD.Members["basic-pd-2"]
	m.Health = false
	f.tc.Status.PD.Members["basic-pd-2"] = m
	if _, wait := flow.AsRequeue(f.c.Failover(context.Background(), f.tc)); !wait {
		t.Fatal("want a wait for quorum")
	}
	if !f.tc.Status.PD.FailureMembers["basic-pd-1"].HostDown {
		t.Fatal("not marked host-down")
	}
	if w := f.writes(); len(w) != 0 {
		t.Fatalf("without quorum wrote %v", w)
	}
}
