package pd

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func countCalls(c *pdapi.FakeClient, m pdapi.Method) int {
	n := 0
	for _, call := range c.Calls() {
		if call.Method == m {
			n++
		}
	}
	return n
}

func TestObserveMembers(t *testing.T) {
	t.Parallel()
	tc := basicTC()
	defaulting.SetTidbClusterDefaults(tc)
	own := "http://" + tc.Name + "-pd-0." + tc.Name + "-pd-peer." + tc.Namespace + ".svc:2379"
	peer := "http://other-pd-0.other-pd-peer." + tc.Namespace + ".svc:2379"
	fc := pdapi.NewFakeControl()
	client := fc.ClusterClient(tc.Namespace, tc.Name)
	client.SetHealth(pdapi.HealthInfo{
		{Name: tc.Name + "-pd-0", MemberID: 1, Health: true, ClientUrls: []string{own}},
		{Name: "other-pd-0", MemberID: 2, Health: false, ClientUrls: []string{peer}},
	})
	client.SetMembers("other-pd-0", &pdapi.Member{Name: "other-pd-0", MemberID: 2})
	client.SetCluster(pdapi.Cluster{ID: 42})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	ctx := context.Background()

	if err := observeMembers(ctx, fc, clk, tc); err != nil {
		t.Fatal(err)
	}
	s := tc.Status.PD
	if !s.Synced || tc.Status.ClusterID != "42" || len(s.Members) != 1 || len(s.PeerMembers) != 1 ||
		!s.Members[tc.Name+"-pd-0"].Health || s.Leader.Name != "other-pd-0" || s.Leader.Health {
		t.Fatalf("first observation: cluster ID %q, status.pd %+v", tc.Status.ClusterID, s)
	}

	// The cluster ID is asked for once; a member whose health holds keeps
	// its lastTransitionTime, one whose health changed moves it.
	clk.SetTime(t0.Add(time.Minute))
	client.SetHealth(pdapi.HealthInfo{
		{Name: tc.Name + "-pd-0", MemberID: 1, Health: true, ClientUrls: []string{own}},
		{Name: "other-pd-0", MemberID: 2, Health: true, ClientUrls: []string{peer}},
	})
	if err := observeMembers(ctx, fc, clk, tc); err != nil {
		t.Fatal(err)
	}
	if n := countCalls(client, pdapi.MethodGetCluster); n != 1 {
		t.Errorf("GetCluster called %d times over two observations, want 1", n)
	}
	s = tc.Status.PD
	if got := s.Members[tc.Name+"-pd-0"].LastTransitionTime; !got.Equal(&metav1.Time{Time: t0}) {
		t.Errorf("steady member's lastTransitionTime = %v, want %v", got, t0)
	}
	if got := s.PeerMembers["other-pd-0"].LastTransitionTime; !got.Equal(&metav1.Time{Time: t0.Add(time.Minute)}) {
		t.Errorf("recovered member's lastTransitionTime = %v, want %v", got, t0.Add(time.Minute))
	}

	// PD unreachable: not synced, members kept.
	client.SetError(pdapi.MethodGetHealth, errors.New("connection refused"))
	if err := observeMembers(ctx, fc, clk, tc); err == nil {
		t.Fatal("observeMembers with PD down: no error")
	}
	if tc.Status.PD.Synced || len(tc.Status.PD.Members) != 1 {
		t.Errorf("PD down: synced %v, %d members; want false and the old member kept", tc.Status.PD.Synced, len(tc.Status.PD.Members))
	}
}

func TestObserveMembersAsksClusterIDWhenUnknown(t *testing.T) {
	t.Parallel()
	tc := basicTC()
	defaulting.SetTidbClusterDefaults(tc)
	tc.Status = v1alpha1.TidbClusterStatus{}
	fc := pdapi.NewFakeControl()
	client := fc.ClusterClient(tc.Namespace, tc.Name)
	client.SetError(pdapi.MethodGetCluster, errors.New("timeout"))
	if err := observeMembers(context.Background(), fc, clocktesting.NewFakePassiveClock(time.Now()), tc); err == nil {
		t.Fatal("GetCluster failing: no error")
	}
	if tc.Status.PD.Synced || tc.Status.ClusterID != "" {
		t.Errorf("synced %v, cluster ID %q; want false and empty", tc.Status.PD.Synced, tc.Status.ClusterID)
	}
}

// TestRefreshOfFailuresKeepsTheLeaderOnlyWhileNoMemberChanged: a refresh
// that reads only failures (flow.ObserveFailures) keeps the leader PD named
// before while every member is as healthy as before, and asks PD again as
// soon as one is not.
func TestRefreshOfFailuresKeepsTheLeaderOnlyWhileNoMemberChanged(t *testing.T) {
	t.Parallel()
	tc := basicTC()
	defaulting.SetTidbClusterDefaults(tc)
	url := func(i int) string {
		return "http://" + tc.Name + "-pd-" + string(rune('0'+i)) + "." + tc.Name + "-pd-peer." + tc.Namespace + ".svc:2379"
	}
	health := func(healthy1 bool) pdapi.HealthInfo {
		return pdapi.HealthInfo{
			{Name: tc.Name + "-pd-0", MemberID: 1, Health: true, ClientUrls: []string{url(0)}},
			{Name: tc.Name + "-pd-1", MemberID: 2, Health: healthy1, ClientUrls: []string{url(1)}},
		}
	}
	fc := pdapi.NewFakeControl()
	client := fc.ClusterClient(tc.Namespace, tc.Name)
	client.SetHealth(health(true))
	client.SetMembers(tc.Name+"-pd-1", &pdapi.Member{Name: tc.Name + "-pd-0", MemberID: 1}, &pdapi.Member{Name: tc.Name + "-pd-1", MemberID: 2})
	client.SetCluster(pdapi.Cluster{ID: 42})
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := observeMembers(context.Background(), fc, clk, tc); err != nil {
		t.Fatal(err)
	}
	refresh := flow.WithObservation(context.Background(), flow.ObserveFailures)

	// PD moved leadership, but nothing failed: the refresh does not ask.
	client.SetMembers(tc.Name+"-pd-0", &pdapi.Member{Name: tc.Name + "-pd-0", MemberID: 1}, &pdapi.Member{Name: tc.Name + "-pd-1", MemberID: 2})
	client.ResetCalls()
	if err := observeMembers(refresh, fc, clk, tc); err != nil {
		t.Fatal(err)
	}
	if n := countCalls(client, pdapi.MethodGetLeader); n != 0 || countCalls(client, pdapi.MethodGetHealth) != 1 {
		t.Errorf("refresh with unchanged health: GetLeader %d times, GetHealth %d times; want 0 and 1", n, countCalls(client, pdapi.MethodGetHealth))
	}
	if got := tc.Status.PD.Leader; got.Name != tc.Name+"-pd-1" || got.ID != "2" || !got.Health {
		t.Errorf("kept leader = %+v, want %s-pd-1 (ID 2, healthy)", got, tc.Name)
	}

	// The leader's member turned unhealthy: the refresh asks PD again.
	client.SetHealth(health(false))
	if err := observeMembers(refresh, fc, clk, tc); err != nil {
		t.Fatal(err)
	}
	if n := countCalls(client, pdapi.MethodGetLeader); n != 1 {
		t.Errorf("refresh after the leader's member failed: GetLeader %d times, want 1", n)
	}
	if got := tc.Status.PD.Leader.Name; got != tc.Name+"-pd-0" {
		t.Errorf("leader after a member failed = %s, want %s-pd-0 as PD says", got, tc.Name)
	}
}
