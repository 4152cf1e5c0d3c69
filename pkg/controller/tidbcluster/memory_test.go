package tidbcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

func TestStatusMemoryRecall(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	status := &v1alpha1.TidbClusterStatus{ClusterID: "42"}
	cases := []struct {
		name       string
		refresh    time.Duration
		converged  bool
		generation int64 // of the cluster recalled; remembered at 3
		after      time.Duration
		forget     bool
		want       flow.Observation
		wantStatus string
	}{
		{name: "converged, recent", refresh: time.Minute, converged: true, generation: 3, after: 59 * time.Second, want: flow.ObserveNone, wantStatus: "42"},
		{name: "converged, due for refresh", refresh: time.Minute, converged: true, generation: 3, after: time.Minute, want: flow.ObserveFailures, wantStatus: "42"},
		{name: "converged, due for a full refresh", refresh: time.Minute, converged: true, generation: 3, after: FullRefreshEvery * time.Minute, want: flow.ObserveAll, wantStatus: "42"},
		{name: "not converged", refresh: time.Minute, generation: 3, after: time.Second, want: flow.ObserveAll, wantStatus: "42"},
		{name: "spec changed", refresh: time.Minute, converged: true, generation: 4, after: time.Second, want: flow.ObserveAll, wantStatus: "42"},
		{name: "refresh 0: always observe", converged: true, generation: 3, after: time.Second, want: flow.ObserveAll, wantStatus: "42"},
		{name: "forgotten", refresh: time.Minute, converged: true, generation: 3, after: time.Second, forget: true, want: flow.ObserveAll, wantStatus: "cached"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := clocktesting.NewFakePassiveClock(t0)
			m := NewStatusMemory(clk, c.refresh, 0)
			tc := newTC()
			m.Remember(tc, status, t0, flow.ObserveAll, c.converged, true)
			if c.forget {
				m.Forget(tc.UID)
			}
			clk.SetTime(t0.Add(c.after))
			tc.Generation = c.generation
			tc.Status.ClusterID = "cached"
			if got := m.Recall(tc); got != c.want {
				t.Errorf("Recall = %v, want %v", got, c.want)
			}
			if tc.Status.ClusterID != c.wantStatus {
				t.Errorf("status after Recall has cluster ID %q, want %q", tc.Status.ClusterID, c.wantStatus)
			}
		})
	}
}

func TestStatusMemoryKeepsObservationTimeWhenMembersWereReused(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := NewStatusMemory(clk, time.Minute, 0)
	tc := newTC()
	m.Remember(tc, &tc.Status, t0, flow.ObserveAll, true, true)
	m.Remember(tc, &tc.Status, t0.Add(40*time.Second), flow.ObserveNone, true, false) // a resync that reused members
	clk.SetTime(t0.Add(61 * time.Second))
	if got := m.Recall(tc); got != flow.ObserveFailures {
		t.Errorf("members read 61 s ago: Recall = %v, want a refresh (%v); a reuse must not restart the refresh clock", got, flow.ObserveFailures)
	}
	var nilMemory *StatusMemory
	nilMemory.Remember(tc, &tc.Status, t0, flow.ObserveAll, true, true)
	if nilMemory.Recall(tc) != flow.ObserveAll || nilMemory.Len() != 0 {
		t.Error("a nil memory remembered something")
	}
}

// TestStatusMemoryReadsEverythingAgainAfterFailureRefreshes: refreshes that
// read only failures do not restart the full-refresh clock, so the PD
// leader and location labels are read again FullRefreshEvery intervals
// after the last full reading.
func TestStatusMemoryReadsEverythingAgainAfterFailureRefreshes(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := NewStatusMemory(clk, time.Minute, 0)
	tc := newTC()
	m.Remember(tc, &tc.Status, t0, flow.ObserveAll, true, true)
	var got []flow.Observation
	for i := 1; i <= FullRefreshEvery; i++ {
		now := t0.Add(time.Duration(i) * time.Minute)
		clk.SetTime(now)
		o := m.Recall(tc)
		got = append(got, o)
		m.Remember(tc, &tc.Status, now, o, true, false)
	}
	want := make([]flow.Observation, FullRefreshEvery)
	for i := range want {
		want[i] = flow.ObserveFailures
	}
	want[FullRefreshEvery-1] = flow.ObserveAll
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("refreshes every minute observed %v, want %v", got, want)
	}
}

// readyComponent plays every component: it reports a converged, healthy
// cluster, changes one status field on its second run, and records whether
// each run was told its members are recent.
type readyComponent struct {
	runs   int
	recent []bool
}

func (r *readyComponent) Name() string { return "all" }

func (r *readyComponent) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	r.runs++
	r.recent = append(r.recent, flow.RecentObservation(ctx))
	done := &appsv1.StatefulSetStatus{CurrentRevision: "r1", UpdateRevision: "r1"}
	tc.Status.PD.StatefulSet, tc.Status.TiKV.StatefulSet, tc.Status.TiDB.StatefulSet = done, done.DeepCopy(), done.DeepCopy()
	if r.runs == 1 {
		tc.Status.ClusterID = "7" // read from PD once, as the PD component does
		tc.Status.PD.Members = map[string]v1alpha1.PDMember{}
		for i := range 3 {
			name := fmt.Sprintf("basic-pd-%d", i)
			tc.Status.PD.Members[name] = v1alpha1.PDMember{Name: name, Health: true}
		}
		tc.Status.TiKV.Stores = map[string]v1alpha1.TiKVStore{"1": {State: "Up"}, "2": {State: "Up"}, "3": {State: "Up"}}
		tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{"a": {Health: true}, "b": {Health: true}}
	}
	if r.runs == 2 {
		tc.Status.TiKV.BootStrapped = true
	}
	return nil
}

func TestControlStartsFromItsLastStatusWriteAndReusesRecentMembers(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	ctx := context.Background()
	clusters := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns")
	stale, err := clusters.Create(ctx, newTC(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	comp := &readyComponent{}
	control := NewDefaultControl([]Component{comp}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, nil,
		NewStatusMemory(clk, time.Minute, 0))

	if err := control.UpdateTidbCluster(ctx, stale.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	// The informer has not delivered the first write yet: the second sync
	// gets the stale object, changes one more field, and must not write the
	// stale rest back.
	clk.SetTime(t0.Add(30 * time.Second))
	if err := control.UpdateTidbCluster(ctx, stale.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	got, err := clusters.Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ClusterID != "7" || len(got.Status.PD.Members) != 3 || !got.Status.TiKV.BootStrapped {
		t.Errorf("server status: cluster ID %q, %d PD members, bootstrapped %v; want 7, 3, true (a stale cache must not undo a write)",
			got.Status.ClusterID, len(got.Status.PD.Members), got.Status.TiKV.BootStrapped)
	}
	deps.FakePingcap.ClearActions()
	clk.SetTime(t0.Add(59 * time.Second))
	if err := control.UpdateTidbCluster(ctx, stale.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if w := writes(deps); len(w) != 0 {
		t.Errorf("a converged resync from a stale cache wrote %v", w)
	}
	for _, at := range []time.Duration{61 * time.Second, 118 * time.Second, 120 * time.Second} {
		clk.SetTime(t0.Add(at))
		if err := control.UpdateTidbCluster(ctx, got.DeepCopy()); err != nil {
			t.Fatal(err)
		}
	}
	// Syncs 1 and 2 changed status, so members are read again; sync 3 (59 s)
	// changed nothing: syncs 4 (61 s) and 5 (118 s) reuse its reading, and
	// sync 6 (120 s), a minute after it, reads again.
	if want := []bool{false, false, false, true, true, false}; fmt.Sprint(comp.recent) != fmt.Sprint(want) {
		t.Errorf("members marked recent per sync = %v, want %v", comp.recent, want)
	}
}

// TestStatusMemoryKeepsAStatusOnlyUntilTheCacheHoldsIt: the status a sync
// wrote (its times to the nanosecond) is recalled while the cache lags;
// once the cache holds it (times to the second, as the server stores
// them), the memory drops its copy and later syncs start from the cache,
// until the next write.
func TestStatusMemoryKeepsAStatusOnlyUntilTheCacheHoldsIt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := NewStatusMemory(clk, time.Minute, 0)
	written := &v1alpha1.TidbClusterStatus{ClusterID: "42", Conditions: []metav1.Condition{{Type: "Ready",
		Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0), Reason: "Ready"}}}
	tc := newTC()
	m.Remember(tc, written, t0, flow.ObserveAll, false, true)

	lagging := newTC()
	lagging.Status.ClusterID = "old"
	m.Recall(lagging)
	if lagging.Status.ClusterID != "42" {
		t.Fatalf("a lagging cache's status was kept: cluster ID %q", lagging.Status.ClusterID)
	}

	caught := newTC()
	caught.Status = *written.DeepCopy()
	caught.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Truncate(time.Second))
	m.Recall(caught)
	if remembered := m.clusters[tc.UID].status; remembered != nil {
		t.Errorf("the memory kept its copy after the cache caught up: %+v", remembered)
	}
	m.Remember(tc, &caught.Status, t0, flow.ObserveAll, true, false)
	if m.clusters[tc.UID].status != nil {
		t.Error("a sync that wrote nothing made the memory copy the status again")
	}
	edited := newTC()
	edited.Status.ClusterID = "cached"
	m.Recall(edited)
	if edited.Status.ClusterID != "cached" {
		t.Errorf("with nothing remembered the cache's status was replaced: %q", edited.Status.ClusterID)
	}

	m.Remember(tc, &v1alpha1.TidbClusterStatus{ClusterID: "43"}, t0, flow.ObserveAll, false, true)
	m.Recall(edited)
	if edited.Status.ClusterID != "43" {
		t.Errorf("a new write was not recalled over the cache: %q", edited.Status.ClusterID)
	}
}

// TestTheMemoryDropsItsCopyWhenTheInformerDeliversTheWrite: the update
// handler, not the next sync (30 s later, or minutes under load), lets the
// memory drop the status it wrote once the cache holds it; an update that
// carries another status (the cache still lags) leaves the copy.
func TestTheMemoryDropsItsCopyWhenTheInformerDeliversTheWrite(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewStatusMemory(clocktesting.NewFakePassiveClock(t0), time.Minute, 0)
	c := &Controller{memory: m}
	before := newTC()
	before.ResourceVersion = "1"
	m.Remember(before, &v1alpha1.TidbClusterStatus{ClusterID: "42"}, t0, flow.ObserveAll, false, true)

	lagging := before.DeepCopy()
	lagging.ResourceVersion, lagging.Status.ClusterID = "2", "41"
	c.onUpdate(before, lagging)
	if m.clusters[before.UID].status == nil {
		t.Fatal("an update without the written status made the memory drop it")
	}
	delivered := before.DeepCopy()
	delivered.ResourceVersion, delivered.Status.ClusterID = "3", "42"
	c.onUpdate(lagging, delivered)
	if s := m.clusters[before.UID].status; s != nil {
		t.Errorf("the memory kept its copy after the informer delivered it: %+v", s)
	}
	var nilMemory *StatusMemory
	nilMemory.Delivered(delivered)
}
