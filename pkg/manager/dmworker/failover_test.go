package dmworker

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// failoverDC has 2 desired workers, worker 1 offline since t0, all pods started.
func failoverDC() *v1alpha1.DMCluster {
	dc := newDC(1, 2)
	dc.Status.Worker.Synced = true
	dc.Status.Worker.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 1}
	dc.Status.Worker.Members = map[string]v1alpha1.WorkerMember{
		"basic-dm-worker-0": {Name: "basic-dm-worker-0", Stage: dmapi.StageBound, LastTransitionTime: metav1.NewTime(t0)},
		"basic-dm-worker-1": {Name: "basic-dm-worker-1", Stage: dmapi.StageOffline, LastTransitionTime: metav1.NewTime(t0)},
	}
	return dc
}

func TestFailoverMarksOfflineWorkerAfterThePeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(t0.Add(time.Minute))
	rec := record.NewFakeRecorder(10)
	env := &component.Env{Clock: clk, Recorder: rec, AutoFailover: true,
		FailoverPeriods: map[string]time.Duration{"dm-worker": 5 * time.Minute}}
	c := New(nil, env)
	dc := failoverDC()
	must(t, c.Failover(ctx, dc))
	if len(dc.Status.Worker.FailureMembers) != 0 {
		t.Fatal("marked within the period")
	}
	clk.SetTime(t0.Add(6 * time.Minute))
	if _, ok := flow.AsRequeue(c.Failover(ctx, dc)); !ok {
		t.Fatal("marking did not requeue")
	}
	st := &dc.Status.Worker
	if _, ok := st.FailureMembers["basic-dm-worker-1"]; !ok || st.FailoverUID == "" || c.FailoverReplicas(dc) != 1 {
		t.Fatalf("status = %+v", st)
	}
	if got := <-rec.Events; got != "Warning Unhealthy worker pod[basic-dm-worker-1] is unhealthy, msg:worker[ns/basic-dm-worker-1] is Offline" {
		t.Fatalf("event = %q", got)
	}
	// The worker is back; recovery needs asking.
	st.Members["basic-dm-worker-1"] = v1alpha1.WorkerMember{Name: "basic-dm-worker-1", Stage: dmapi.StageFree}
	st.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3}
	must(t, c.Failover(ctx, dc))
	if len(st.FailureMembers) != 1 {
		t.Fatal("recovered without recoverFailover")
	}
	dc.Spec.Worker.Failover = &v1alpha1.Failover{RecoverByUID: st.FailoverUID}
	must(t, c.Failover(ctx, dc))
	if st.FailureMembers != nil || st.FailoverUID != "" {
		t.Fatalf("recoverByUID did not recover: %+v", st)
	}
}

func TestFailoverDisabledAndUndesired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(t0.Add(time.Hour))
	dc := failoverDC()
	zero := int32(0)
	dc.Spec.Worker.MaxFailoverCount = &zero
	c := New(nil, &component.Env{Clock: clk, AutoFailover: true})
	must(t, c.Failover(ctx, dc))
	if len(dc.Status.Worker.FailureMembers) != 0 {
		t.Fatal("maxFailoverCount 0 did not disable failover")
	}
	dc.Status.Worker.FailureMembers = map[string]v1alpha1.WorkerFailureMember{"basic-dm-worker-5": {PodName: "basic-dm-worker-5"}}
	must(t, c.Failover(ctx, dc))
	if len(dc.Status.Worker.FailureMembers) != 0 {
		t.Fatal("a record of an undesired ordinal was kept")
	}
}
