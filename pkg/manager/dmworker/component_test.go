package dmworker

import (
	"context"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newDC(masters, workers int32) *v1alpha1.DMCluster {
	return &v1alpha1.DMCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.DMClusterSpec{Master: v1alpha1.MasterSpec{Replicas: masters},
			Worker: &v1alpha1.WorkerSpec{Replicas: workers, StorageSize: "1Gi"}}}
}

func worker(i, stage string) dmapi.WorkerMember {
	return dmapi.WorkerMember{Name: "basic-dm-worker-" + i, Addr: "basic-dm-worker-" + i + ".basic-dm-worker-peer:8262", Stage: stage}
}

func TestGateWaitsForMasterQuorum(t *testing.T) {
	t.Parallel()
	c := New(nil, &component.Env{})
	dc := newDC(3, 1)
	member := func(h bool) v1alpha1.MasterMember { return v1alpha1.MasterMember{Health: h} }
	cases := []struct {
		name    string
		members map[string]v1alpha1.MasterMember
		ready   int32
		phase   v1alpha1.MemberPhase
		open    bool
	}{
		{"no status", nil, 0, "", false},
		{"one of three", map[string]v1alpha1.MasterMember{"a": member(true)}, 3, "", false},
		{"two members one healthy", map[string]v1alpha1.MasterMember{"a": member(true), "b": member(false)}, 3, "", false},
		{"quorum but one ready pod", map[string]v1alpha1.MasterMember{"a": member(true), "b": member(true)}, 1, "", false},
		{"quorum", map[string]v1alpha1.MasterMember{"a": member(true), "b": member(true)}, 2, v1alpha1.NormalPhase, true},
		{"suspended", map[string]v1alpha1.MasterMember{"a": member(true), "b": member(true)}, 2, v1alpha1.SuspendPhase, false},
	}
	for _, tc := range cases {
		dc.Status.Master.Members = tc.members
		dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: tc.ready}
		dc.Status.Master.Phase = tc.phase
		got := c.Gate(dc)
		if (got == "") != tc.open || (!tc.open && got != WaitingForMaster) {
			t.Errorf("%s: Gate = %q", tc.name, got)
		}
	}
}

func TestObserveDeletesOfflineUndesiredWorkers(t *testing.T) {
	t.Parallel()
	ctl := dmapi.NewFakeControl()
	fc := ctl.Cluster("ns", "basic")
	fc.SetWorkers(worker("0", dmapi.StageBound), worker("1", dmapi.StageOffline), worker("2", dmapi.StageOffline))
	clk := clocktesting.NewFakePassiveClock(t0)
	c := New(ctl, &component.Env{Clock: clk})
	dc := newDC(1, 2)
	ctx := context.Background()
	if err := c.Observe(ctx, dc, nil); err != nil {
		t.Fatal(err)
	}
	if calls := fc.CallsOf(dmapi.MethodDeleteWorker); len(calls) != 1 || calls[0].Name != "basic-dm-worker-2" {
		t.Fatalf("delete calls = %v", calls)
	}
	st := dc.Status.Worker
	if !st.Synced || len(st.Members) != 3 || st.Members["basic-dm-worker-0"].Stage != dmapi.StageBound {
		t.Fatalf("status = %+v", st)
	}
	if c.PodHealthy(dc, "basic-dm-worker-1") || !c.PodHealthy(dc, "basic-dm-worker-0") {
		t.Error("PodHealthy does not follow the stage")
	}
	if r, m := c.NotReady(dc); r != "DMMasterUnhealthy" || m != "some dm-worker(s) are not up yet" {
		t.Errorf("NotReady = %q %q", r, m)
	}
	clk.SetTime(t0.Add(time.Minute))
	fc.SetWorkers(worker("0", dmapi.StageBound), worker("1", dmapi.StageFree))
	must(t, c.Observe(ctx, dc, nil))
	st = dc.Status.Worker
	if !st.Members["basic-dm-worker-0"].LastTransitionTime.Time.Equal(t0) || !st.Members["basic-dm-worker-1"].LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("transition times = %+v", st.Members)
	}
	if r, _ := c.NotReady(dc); r != "" {
		t.Errorf("all up: NotReady = %q", r)
	}
	fc.SetError(dmapi.MethodGetWorkers, errors.New("down"))
	if err := c.Observe(ctx, dc, nil); err == nil || dc.Status.Worker.Synced {
		t.Fatal("unreachable dm-master kept worker status synced")
	}
	if _, ok := flow.AsRequeue(c.PreScaleIn(ctx, dc, 1)); !ok {
		t.Fatal("scale-in with unsynced worker status did not wait")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
