package tidbcluster

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

func TestProgressOnly(t *testing.T) {
	t.Parallel()
	base := func() *v1alpha1.TidbClusterStatus {
		return &v1alpha1.TidbClusterStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
			{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionFalse, Reason: "PDNotReady", Message: "waiting for PD"},
			{Type: v1alpha1.TidbClusterProgressing, Status: metav1.ConditionTrue, Message: "pd: waiting"},
			{Type: v1alpha1.TidbClusterDegraded, Status: metav1.ConditionFalse},
		}}
	}
	cases := []struct {
		name   string
		change func(*v1alpha1.TidbClusterStatus)
		want   bool
	}{
		{"nothing", func(*v1alpha1.TidbClusterStatus) {}, true},
		{"Progressing's message", func(s *v1alpha1.TidbClusterStatus) { s.Conditions[1].Message = "tikv: waiting" }, true},
		{"Ready's wording", func(s *v1alpha1.TidbClusterStatus) { s.Conditions[0].Message = "waiting for TiKV" }, true},
		{"PD observed", func(s *v1alpha1.TidbClusterStatus) {
			s.ClusterID, s.PD.Phase, s.PD.Synced = "7", v1alpha1.NormalPhase, true
			s.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0": {Health: true}}
			s.TiKV.Stores = map[string]v1alpha1.TiKVStore{"1": {State: "Up"}}
		}, true},
		{"Ready turns True", func(s *v1alpha1.TidbClusterStatus) { s.Conditions[0].Status = metav1.ConditionTrue }, false},
		{"Degraded turns True", func(s *v1alpha1.TidbClusterStatus) { s.Conditions[2].Status = metav1.ConditionTrue }, false},
		{"Progressing turns False", func(s *v1alpha1.TidbClusterStatus) { s.Conditions[1].Status = metav1.ConditionFalse }, false},
		{"a new generation", func(s *v1alpha1.TidbClusterStatus) { s.ObservedGeneration = 3 }, false},
		{"Unsupported appears", func(s *v1alpha1.TidbClusterStatus) {
			s.Conditions = append(s.Conditions, metav1.Condition{Type: v1alpha1.TidbClusterUnsupported, Status: metav1.ConditionTrue})
		}, false},
		{"a failure store", func(s *v1alpha1.TidbClusterStatus) {
			s.TiKV.FailureStores = map[string]v1alpha1.TiKVFailureStore{"1": {PodName: "basic-tikv-0"}}
		}, false},
		{"a PD failure member", func(s *v1alpha1.TidbClusterStatus) {
			s.PD.FailureMembers = map[string]v1alpha1.PDFailureMember{"basic-pd-0": {PodName: "basic-pd-0"}}
		}, false},
		{"a volume replacement", func(s *v1alpha1.TidbClusterStatus) { s.TiKV.VolReplaceInProgress = true }, false},
		{"a leader eviction", func(s *v1alpha1.TidbClusterStatus) {
			s.TiKV.EvictLeader = map[string]*v1alpha1.EvictLeaderStatus{"basic-tikv-0": {}}
		}, false},
	}
	for _, c := range cases {
		next := base()
		c.change(next)
		if got := ProgressOnly(base(), next); got != c.want {
			t.Errorf("%s: ProgressOnly = %v, want %v", c.name, got, c.want)
		}
	}
}

// progressComponent waits on every sync and shows a little more progress
// each time, until done is set.
type progressComponent struct {
	runs int
	done bool
}

func (p *progressComponent) Name() string { return "pd" }

func (p *progressComponent) Sync(_ context.Context, tc *v1alpha1.TidbCluster) error {
	p.runs++
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{}
	for i := 0; i < p.runs; i++ {
		name := "basic-pd-" + string(rune('0'+i))
		tc.Status.PD.Members[name] = v1alpha1.PDMember{Name: name}
	}
	if p.done {
		return nil
	}
	return flow.Requeue("waiting for %d PD members", p.runs+1)
}

// A cluster that only progresses is written on its first sync and when
// it is done; the syncs between start from the status held back, which is
// written once the progress interval has passed.
func TestControlHoldsProgressUntilTheIntervalOrADecisiveChange(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	ctx := context.Background()
	clusters := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns")
	tc, err := clusters.Create(ctx, newTC(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	comp := &progressComponent{}
	control := NewDefaultControl([]Component{comp}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, nil,
		NewStatusMemory(clk, time.Minute, 15*time.Second))
	sync := func(at time.Duration) error {
		clk.SetTime(t0.Add(at))
		return control.UpdateTidbCluster(ctx, tc.DeepCopy()) // the cache never catches up: the memory must carry it
	}
	serverMembers := func() int {
		got, err := clusters.Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(got.Status.PD.Members)
	}

	deps.FakePingcap.ClearActions()
	if err := sync(0); err == nil {
		t.Fatal("first sync: want a wait")
	}
	if w := writes(deps); len(w) != 1 || serverMembers() != 1 {
		t.Fatalf("first sync: %d writes, %d members on the server; want its status written at once", len(w), serverMembers())
	}
	deps.FakePingcap.ClearActions()
	re, waiting := flow.AsRequeue(sync(4 * time.Second))
	if !waiting || re.After != 0 {
		t.Fatalf("a held sync 4 s after the write returned %v, want the usual wait (the status may wait 11 s more)", re)
	}
	re, _ = flow.AsRequeue(sync(12 * time.Second))
	if re == nil || re.After != 3*time.Second {
		t.Errorf("a held sync 12 s after the write comes back after %v, want the 3 s the status may still wait", re)
	}
	if w := writes(deps); len(w) != 0 || serverMembers() != 1 {
		t.Fatalf("progress 4 s and 12 s after a write: %d writes, want it held", len(w))
	}
	if err := sync(15 * time.Second); err == nil {
		t.Fatal("want a wait")
	}
	if w := writes(deps); len(w) != 1 || serverMembers() != 4 {
		t.Fatalf("15 s after the last write: %d writes, %d members; want one write carrying every sync's progress (4)",
			len(w), serverMembers())
	}
	deps.FakePingcap.ClearActions()
	comp.done = true
	if err := sync(16 * time.Second); err != nil {
		t.Fatal(err)
	}
	got, err := clusters.Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := writes(deps); len(w) != 1 || isTrue(got.Status.Conditions, v1alpha1.TidbClusterProgressing) {
		t.Errorf("the sync that is done 1 s after a write: %d writes, Progressing %v; want it written at once",
			len(w), isTrue(got.Status.Conditions, v1alpha1.TidbClusterProgressing))
	}
}

func isTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// TestHoldProgressOfASyncWithoutError: a sync that ends without error but
// leaves the cluster not Ready (pods up, TiDB not yet healthy) holds a
// progress-only status too, and asks to come back when it may be written;
// an error that is no wait is written at once.
func TestHoldProgressOfASyncWithoutError(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	c := &defaultControl{memory: NewStatusMemory(clk, time.Minute, 15*time.Second)}
	tc := newTC()
	tc.Status.Conditions = []metav1.Condition{
		{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionFalse, Reason: "StatefulSetNotUpToDate"},
		{Type: v1alpha1.TidbClusterProgressing, Status: metav1.ConditionTrue, Reason: "Reconciling"},
	}
	written := tc.Status.DeepCopy()
	c.memory.Remember(tc, written, t0, flow.ObserveAll, false, true)
	clk.SetTime(t0.Add(5 * time.Second))
	tc.Status.Conditions[0].Reason = "TiDBUnhealthy"
	tc.Status.TiDB.Members = map[string]v1alpha1.TiDBMember{"basic-tidb-0": {Name: "basic-tidb-0"}}

	held, err := c.holdProgress(tc, written, false, nil)
	re, waiting := flow.AsRequeue(err)
	if !held || !waiting || re.After != 10*time.Second {
		t.Fatalf("progress 5 s after a write by a sync without error: held %v, error %v; want held and back after 10 s", held, err)
	}
	if held, err := c.holdProgress(tc, written, false, errors.New("PD refused")); held || err == nil || err.Error() != "PD refused" {
		t.Errorf("a sync error: held %v, error %v; want the status written at once with the error", held, err)
	}
}

// TestAnUnchangedStatusIsNotHeld: a sync whose status equals what the
// server has (every converged resync) holds nothing back and keeps its
// own wait, even right after a write.
func TestAnUnchangedStatusIsNotHeld(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	c := &defaultControl{memory: NewStatusMemory(clk, time.Minute, 15*time.Second)}
	tc := newTC()
	tc.Status.Conditions = []metav1.Condition{{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionTrue}}
	written := tc.Status.DeepCopy()
	c.memory.Remember(tc, written, t0, flow.ObserveAll, false, true)
	clk.SetTime(t0.Add(5 * time.Second))
	for _, syncErr := range []error{nil, flow.Requeue("waiting")} {
		held, err := c.holdProgress(tc, written, true, syncErr)
		if held || !errors.Is(err, syncErr) {
			t.Errorf("unchanged status, sync error %v: held %v, error %v; want nothing held and the error as it was",
				syncErr, held, err)
		}
	}
	if p := c.memory.Pending(tc); p != nil {
		t.Errorf("pending status %+v, want none", p)
	}
}
