//go:build integration

package faults

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// chaosAction is a user action of chaos mode.
type chaosAction string

const (
	actScalePD   chaosAction = "scale-pd"
	actScaleTiKV chaosAction = "scale-tikv"
	actScaleTiDB chaosAction = "scale-tidb"
	actUpgrade   chaosAction = "upgrade"
	actConfig    chaosAction = "config"
	actPause     chaosAction = "pause-resume"
	actRecreate  chaosAction = "recreate"
	actBackup    chaosAction = "backup"
)

// chaosFault is a fault of the suite's catalogue that chaos mode applies during an action.
type chaosFault string

const (
	fltNone          chaosFault = "none"
	fltKill          chaosFault = "kill"
	fltPD5xx         chaosFault = "pd-5xx"
	fltPDSlow        chaosFault = "pd-slow"
	fltPDStale       chaosFault = "pd-stale"
	fltPDUnreachable chaosFault = "pd-unreachable"
	fltPodDeleted    chaosFault = "pod-deleted"
	fltJobPodDeleted chaosFault = "job-pod-deleted"
)

// Safe bounds of the scale actions: PD keeps a quorum able to lose one member, TiKV keeps the three
// replicas of max-replicas, TiDB keeps one server.
const (
	chaosPDMin, chaosPDMax     = 3, 5
	chaosTiKVMin, chaosTiKVMax = 3, 5
	chaosTiDBMin, chaosTiDBMax = 1, 3
)

// chaosWeights: how often each action is drawn (recreate and backup are the rarer, slower ones).
var chaosWeights = []struct {
	action chaosAction
	weight int
}{
	{actScalePD, 2}, {actScaleTiKV, 2}, {actScaleTiDB, 2}, {actUpgrade, 2}, {actConfig, 1},
	{actPause, 1}, {actRecreate, 1}, {actBackup, 1},
}

// chaosStep is one step of a cluster's plan: an action, the fault applied while it runs, and then a
// quiet period that must end in convergence.
type chaosStep struct {
	n      int
	action chaosAction
	to     int32  // scale and pause-resume: the component's new replicas
	value  string // upgrade: the version; config: TiKV's log-level; backup: the Backup's name
	fault  chaosFault
	target string // pod-deleted: the pod
	// after is how many more PD/TiKV/TiDB requests the operator sends after the change before the
	// fault starts (lifecycle actions only).
	after int64
}

func (st chaosStep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", st.n, st.action)
	switch st.action {
	case actScalePD, actScaleTiKV, actScaleTiDB:
		fmt.Fprintf(&b, " to %d", st.to)
	case actPause:
		fmt.Fprintf(&b, " (TiDB to %d while paused)", st.to)
	case actUpgrade, actConfig, actBackup:
		fmt.Fprintf(&b, " %s", st.value)
	}
	fmt.Fprintf(&b, ", fault %s", st.fault)
	if st.target != "" {
		fmt.Fprintf(&b, " %s", st.target)
	}
	if st.after > 0 && st.fault != fltNone {
		fmt.Fprintf(&b, " after %d operator requests", st.after)
	}
	return b.String()
}

// chaosModel is what the planner knows of a cluster's spec, so that each step stays within the
// bounds; it changes only with the steps, never with what is observed, so a plan is a function of
// the seed alone.
type chaosModel struct {
	pd, tikv, tidb int32
	patch          int // spec.version is v8.5.<patch>
	warn           bool
	backups        int
}

// planChaos draws every cluster's plan, one cluster after another, from rng.
func planChaos(rng *rand.Rand, clusters, steps int) [][]chaosStep {
	plans := make([][]chaosStep, clusters)
	for c := range plans {
		m := &chaosModel{pd: 3, tikv: 3, tidb: 2}
		for i := 1; i <= steps; i++ {
			plans[c] = append(plans[c], m.next(rng, i))
		}
	}
	return plans
}

func (m *chaosModel) next(rng *rand.Rand, n int) chaosStep {
	st := chaosStep{n: n, action: drawAction(rng)}
	switch st.action {
	case actScalePD:
		st.to = otherIn(rng, m.pd, chaosPDMin, chaosPDMax)
		m.pd = st.to
	case actScaleTiKV:
		st.to = otherIn(rng, m.tikv, chaosTiKVMin, chaosTiKVMax)
		m.tikv = st.to
	case actScaleTiDB, actPause:
		st.to = otherIn(rng, m.tidb, chaosTiDBMin, chaosTiDBMax)
		m.tidb = st.to
	case actUpgrade:
		m.patch++
		st.value = fmt.Sprintf("v8.5.%d", m.patch)
	case actConfig:
		m.warn = !m.warn
		st.value = "info"
		if m.warn {
			st.value = "warn"
		}
	case actBackup:
		m.backups++
		st.value = fmt.Sprintf("chaos-%d", m.backups)
	}
	faults := faultsFor(st.action)
	st.fault = faults[rng.Intn(len(faults))]
	if st.fault == fltPodDeleted {
		st.target = podToDelete(rng, st.action)
	}
	if lifecycleAction(st.action) {
		st.after = 1 + rng.Int63n(8)
	}
	return st
}

func drawAction(rng *rand.Rand) chaosAction {
	total := 0
	for _, w := range chaosWeights {
		total += w.weight
	}
	x := rng.Intn(total)
	for _, w := range chaosWeights {
		if x < w.weight {
			return w.action
		}
		x -= w.weight
	}
	panic("unreachable")
}

// otherIn draws a value in [lo, hi] other than cur.
func otherIn(rng *rand.Rand, cur, lo, hi int32) int32 {
	v := lo + rng.Int31n(hi-lo)
	if v >= cur {
		v++
	}
	return v
}

// lifecycleAction: the operator works throughout the action (it sends requests without waiting for
// a resync), so a fault can wait for its requests.
func lifecycleAction(a chaosAction) bool {
	switch a {
	case actScalePD, actScaleTiKV, actScaleTiDB, actUpgrade, actConfig:
		return true
	}
	return false
}

// faultsFor lists the faults an action may meet. PD slow and stale wait for 10 and 30 operator
// requests: only a lifecycle action makes the operator send them without waiting for resyncs.
// Deleting the TidbCluster is itself the break, so a recreate meets only the operator kill.
func faultsFor(a chaosAction) []chaosFault {
	switch a {
	case actRecreate:
		return []chaosFault{fltNone, fltKill}
	case actBackup:
		return []chaosFault{fltNone, fltKill, fltPD5xx, fltPDUnreachable, fltPodDeleted, fltJobPodDeleted}
	case actScaleTiDB, actPause:
		return []chaosFault{fltNone, fltKill, fltPD5xx, fltPDUnreachable, fltPodDeleted}
	}
	return []chaosFault{fltNone, fltKill, fltPD5xx, fltPDSlow, fltPDStale, fltPDUnreachable, fltPodDeleted}
}

// podToDelete picks the pod a pod-deleted fault deletes: never one of the component the action
// removes members of (the checker would judge the user's deletion as the operator's), so TiDB's
// for a PD or TiKV action and an upgrade or config rollout, PD's or TiKV's for a TiDB one.
func podToDelete(rng *rand.Rand, a chaosAction) string {
	var from []string
	switch a {
	case actScaleTiDB, actPause:
		from = []string{"pd", "tikv"}
	case actBackup:
		from = []string{"pd", "tikv", "tidb"}
	default:
		from = []string{"tidb"}
	}
	return "basic-" + from[rng.Intn(len(from))] + "-0"
}

// TestChaosPlanReplays: a seed gives the same plans every time, within the bounds; another seed
// gives other plans.
func TestChaosPlanReplays(t *testing.T) {
	a := planChaos(rand.New(rand.NewSource(42)), 3, 90)
	b := planChaos(rand.New(rand.NewSource(42)), 3, 90)
	c := planChaos(rand.New(rand.NewSource(43)), 3, 90)
	if planText(a) != planText(b) {
		t.Fatalf("seed 42 drew two different plans:\n%s\n%s", planText(a), planText(b))
	}
	if planText(a) == planText(c) {
		t.Fatalf("seeds 42 and 43 drew the same plans")
	}
	for _, plan := range a {
		m := chaosModel{pd: 3, tikv: 3, tidb: 2}
		for _, st := range plan {
			switch st.action {
			case actScalePD:
				m.pd = st.to
			case actScaleTiKV:
				m.tikv = st.to
			case actScaleTiDB, actPause:
				m.tidb = st.to
			}
			if m.pd < chaosPDMin || m.pd > chaosPDMax || m.tikv < chaosTiKVMin || m.tikv > chaosTiKVMax ||
				m.tidb < chaosTiDBMin || m.tidb > chaosTiDBMax {
				t.Errorf("step %s leaves PD %d, TiKV %d, TiDB %d: out of bounds", st, m.pd, m.tikv, m.tidb)
			}
		}
	}
}
