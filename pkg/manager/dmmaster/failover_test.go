package dmmaster

import (
	"context"
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
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// failoverFixture: 3 masters, basic-dm-master-2 unhealthy since t0, its
// pod and PVC in the API and the PVC in the cache.
func failoverFixture(t *testing.T) (*Component, *v1alpha1.DMCluster, *fake.Clientset, *clocktesting.FakePassiveClock, *dmapi.FakeClient) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "dm-master-basic-dm-master-2", Namespace: "ns", UID: "pvc-2"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-dm-master-2", Namespace: "ns"}}
	kube := fake.NewSimpleClientset(pvc, pod)
	inf := informers.NewSharedInformerFactory(kube, 0)
	must(t, inf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(pvc))
	rec := record.NewFakeRecorder(20)
	clk := clocktesting.NewFakePassiveClock(t0)
	ctl := dmapi.NewFakeControl()
	fc := ctl.Cluster("ns", "basic")
	fc.SetMasters(master("0", true), master("1", true), master("2", false))
	fc.SetLeader("basic-dm-master-0")
	env := &component.Env{Clock: clk, Recorder: rec, AutoFailover: true, Kube: kube,
		PVCs:   inf.Core().V1().PersistentVolumeClaims().Lister(),
		Writer: apply.NewApplier(kube, rec, apply.Caches{})}
	c := New(ctl, env)
	dc := newDC(3)
	must(t, c.Observe(context.Background(), dc, stsOf(3)))
	dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2}
	return c, dc, kube, clk, fc
}

func TestFailoverMarksThenDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, dc, kube, clk, fc := failoverFixture(t)
	must(t, c.Failover(ctx, dc))
	if len(dc.Status.Master.FailureMembers) != 0 {
		t.Fatal("marked within the period")
	}
	clk.SetTime(t0.Add(6 * time.Minute))
	if _, ok := flow.AsRequeue(c.Failover(ctx, dc)); !ok {
		t.Fatal("marking did not requeue")
	}
	f := dc.Status.Master.FailureMembers["basic-dm-master-2"]
	if f.PVCUID != "pvc-2" || f.MemberID != "102" || f.MemberDeleted || len(fc.CallsOf(dmapi.MethodDeleteMaster)) != 0 {
		t.Fatalf("record = %+v, calls %v", f, fc.Calls())
	}
	must(t, c.Failover(ctx, dc))
	f = dc.Status.Master.FailureMembers["basic-dm-master-2"]
	if !f.MemberDeleted || c.FailoverReplicas(dc) != 1 || len(fc.CallsOf(dmapi.MethodDeleteMaster)) != 1 {
		t.Fatalf("record = %+v, calls %v", f, fc.Calls())
	}
	if _, err := kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "dm-master-basic-dm-master-2", metav1.GetOptions{}); err == nil {
		t.Error("PVC kept")
	}
	if _, err := kube.CoreV1().Pods("ns").Get(ctx, "basic-dm-master-2", metav1.GetOptions{}); err == nil {
		t.Error("pod kept")
	}
	// Recovered: every desired member healthy on Ready pods clears the records.
	fc.SetMasters(master("0", true), master("1", true), master("2", true))
	must(t, c.Observe(ctx, dc, stsOf(4)))
	dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 4, ReadyReplicas: 4}
	must(t, c.Failover(ctx, dc))
	if dc.Status.Master.FailureMembers != nil {
		t.Fatalf("not recovered: %+v", dc.Status.Master.FailureMembers)
	}
}

func TestFailoverNeedsQuorumAndCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, dc, _, clk, fc := failoverFixture(t)
	clk.SetTime(t0.Add(time.Hour))
	zero := int32(0)
	dc.Spec.Master.MaxFailoverCount = &zero
	must(t, c.Failover(ctx, dc))
	if len(dc.Status.Master.FailureMembers) != 0 {
		t.Fatal("maxFailoverCount 0 did not disable failover")
	}
	dc.Spec.Master.MaxFailoverCount = nil
	fc.SetMasters(master("0", true), master("1", false), master("2", false))
	must(t, c.Observe(ctx, dc, stsOf(3)))
	if _, ok := flow.AsRequeue(c.Failover(ctx, dc)); !ok || len(dc.Status.Master.FailureMembers) != 0 {
		t.Fatal("failover without a quorum")
	}
}
