package dmmaster

import (
	"context"
	"errors"
	"strings"
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

func newDC(replicas int32) *v1alpha1.DMCluster {
	return &v1alpha1.DMCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.DMClusterSpec{Master: v1alpha1.MasterSpec{Replicas: replicas, StorageSize: "1Gi"}}}
}

func stsOf(n int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &n}, Status: appsv1.StatefulSetStatus{Replicas: n}}
}

func master(i string, alive bool) dmapi.MasterMember {
	return dmapi.MasterMember{Name: "basic-dm-master-" + i, MemberID: dmapi.MemberID("10" + i), Alive: alive,
		ClientURLs: []string{"http://basic-dm-master-" + i + ".basic-dm-master-peer:8261"}}
}

// fixture is a component over a fake dm-master with masters 0..2 (0 leads).
func fixture(t *testing.T) (*Component, *dmapi.FakeClient, *clocktesting.FakePassiveClock) {
	t.Helper()
	ctl := dmapi.NewFakeControl()
	fc := ctl.Cluster("ns", "basic")
	fc.SetMasters(master("0", true), master("1", true), master("2", false))
	fc.SetLeader("basic-dm-master-0")
	clk := clocktesting.NewFakePassiveClock(t0)
	return New(ctl, &component.Env{Clock: clk}), fc, clk
}

func TestObserveMembersLeaderAndTransitions(t *testing.T) {
	t.Parallel()
	c, fc, clk := fixture(t)
	dc := newDC(4)
	ctx := context.Background()
	if err := c.Observe(ctx, dc, stsOf(4)); err != nil {
		t.Fatal(err)
	}
	st := dc.Status.Master
	if !st.Synced || st.Leader.Name != "basic-dm-master-0" || len(st.Members) != 3 || st.Members["basic-dm-master-1"].ID != "101" {
		t.Fatalf("status = %+v", st)
	}
	if _, ok := st.UnjoinedMembers["basic-dm-master-3"]; !ok || len(st.UnjoinedMembers) != 1 {
		t.Fatalf("unjoined = %v", st.UnjoinedMembers)
	}
	clk.SetTime(t0.Add(time.Minute))
	fc.SetMasters(master("0", true), master("1", false), master("2", false))
	if err := c.Observe(ctx, dc, stsOf(4)); err != nil {
		t.Fatal(err)
	}
	st = dc.Status.Master
	if !st.Members["basic-dm-master-0"].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("unchanged member's transition time moved: %v", st.Members["basic-dm-master-0"].LastTransitionTime)
	}
	if !st.Members["basic-dm-master-1"].LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("flipped member's transition time kept: %v", st.Members["basic-dm-master-1"].LastTransitionTime)
	}
	if c.PodHealthy(dc, "basic-dm-master-1") || !c.PodHealthy(dc, "basic-dm-master-0") {
		t.Error("PodHealthy does not follow alive")
	}
	fc.SetError(dmapi.MethodGetMasters, errors.New("down"))
	if err := c.Observe(ctx, dc, stsOf(4)); err == nil || dc.Status.Master.Synced {
		t.Fatalf("unreachable dm-master: err %v synced %v", err, dc.Status.Master.Synced)
	}
}

func TestNotReady(t *testing.T) {
	t.Parallel()
	c, _, _ := fixture(t)
	dc := newDC(3)
	if err := c.Observe(context.Background(), dc, stsOf(3)); err != nil {
		t.Fatal(err)
	}
	if r, m := c.NotReady(dc); r != ReasonUnhealthy || m != "dm-master(s) are not healthy" {
		t.Fatalf("NotReady = %q %q", r, m)
	}
	for k, m := range dc.Status.Master.Members {
		m.Health = true
		dc.Status.Master.Members[k] = m
	}
	if r, _ := c.NotReady(dc); r != "" {
		t.Fatalf("all healthy: NotReady = %q", r)
	}
}

func TestPreScaleIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("not synced waits", func(t *testing.T) {
		t.Parallel()
		c, fc, _ := fixture(t)
		if _, ok := flow.AsRequeue(c.PreScaleIn(ctx, newDC(3), 2)); !ok || len(fc.CallsOf(dmapi.MethodDeleteMaster)) != 0 {
			t.Fatal("scale-in without synced status did not wait")
		}
	})
	t.Run("leader is evicted first", func(t *testing.T) {
		t.Parallel()
		c, fc, _ := fixture(t)
		dc := newDC(3)
		fc.SetLeader("basic-dm-master-2")
		must(t, c.Observe(ctx, dc, stsOf(3)))
		fc.SetMasters(master("0", true), master("1", true), master("2", true))
		err := c.PreScaleIn(ctx, dc, 2)
		if re, ok := flow.AsRequeue(err); !ok || !strings.Contains(re.Reason, "transferring dm-master leader") {
			t.Fatalf("leader scale-in: %v", err)
		}
		if len(fc.CallsOf(dmapi.MethodEvictLeader)) != 1 || len(fc.CallsOf(dmapi.MethodDeleteMaster)) != 0 {
			t.Fatalf("calls = %v", fc.Calls())
		}
		must(t, c.Observe(ctx, dc, stsOf(3)))
		must(t, c.PreScaleIn(ctx, dc, 2))
		if calls := fc.CallsOf(dmapi.MethodDeleteMaster); len(calls) != 1 || calls[0].Name != "basic-dm-master-2" {
			t.Fatalf("delete calls = %v", calls)
		}
	})
	t.Run("member still listed errors", func(t *testing.T) {
		t.Parallel()
		c, fc, _ := fixture(t)
		dc := newDC(3)
		must(t, c.Observe(ctx, dc, stsOf(3)))
		fc.SetError(dmapi.MethodDeleteMaster, errors.New("refused"))
		if err := c.PreScaleIn(ctx, dc, 2); err == nil {
			t.Fatal("failed member deletion let the pod go")
		}
	})
}

func TestPreUpgradePodEvictsLeaderWithMoreThanOnePod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, fc, _ := fixture(t)
	dc := newDC(3)
	must(t, c.Observe(ctx, dc, stsOf(3)))
	dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 3}
	must(t, c.PreUpgradePod(ctx, dc, 1)) // not the leader
	if _, ok := flow.AsRequeue(c.PreUpgradePod(ctx, dc, 0)); !ok {
		t.Fatal("leader restart did not wait for the eviction")
	}
	if calls := fc.CallsOf(dmapi.MethodEvictLeader); len(calls) != 1 || calls[0].Name != "basic-dm-master-0" {
		t.Fatalf("evict calls = %v", calls)
	}
	must(t, c.Observe(ctx, dc, stsOf(3)))
	must(t, c.PreUpgradePod(ctx, dc, 0)) // another member leads now
	dc.Status.Master.Leader.Name = "basic-dm-master-0"
	dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 1}
	must(t, c.PreUpgradePod(ctx, dc, 0)) // a single pod restarts as it is
}

func TestPreUpgradePodWaitsWhileNotSynced(t *testing.T) {
	t.Parallel()
	c, fc, _ := fixture(t)
	dc := newDC(3)
	dc.Status.Master.Synced = false
	dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 3}
	dc.Status.Master.Leader.Name = "basic-dm-master-0"
	if _, ok := flow.AsRequeue(c.PreUpgradePod(context.Background(), dc, 1)); !ok {
		t.Fatal("a dm-master pod restarts while dm-master cannot be asked")
	}
	if calls := fc.CallsOf(dmapi.MethodEvictLeader); len(calls) != 0 {
		t.Fatalf("evict calls = %v, want none", calls)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestForceUpgradeOnlyWhileNotSynced(t *testing.T) {
	t.Parallel()
	c, _, _ := fixture(t)
	dc := newDC(3)
	dc.Annotations = map[string]string{"tidb.pingcap.com/force-upgrade": "true"}
	if !c.ForceUpgrade(dc) {
		t.Fatal("force-upgrade with unsynced status not honoured")
	}
	dc.Status.Master.Synced = true
	if c.ForceUpgrade(dc) {
		t.Fatal("force-upgrade honoured while dm-master answers")
	}
	dc.Status.Master.Synced = false
	dc.Annotations = nil
	if c.ForceUpgrade(dc) {
		t.Fatal("forced without the annotation")
	}
}
