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
