//go:build integration

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// writeChaosFigures prints the chaos figures (seed, duration, actions, faults, checks, violations,
// convergence checks, commit, date) and the plan to the test log and to _output/faults/chaos.md,
// beside the fault suite's figures.md. FIGURES_COMMIT, when set, names the commit instead of git.
func writeChaosFigures(t *testing.T, cfg chaosConfig, plans [][]chaosStep, outs []chaosOutcome, took time.Duration) {
	sort.Slice(outs, func(i, j int) bool { return outs[i].name < outs[j].name })
	commit := envOr("FIGURES_COMMIT", commitOf())
	var b strings.Builder
	fmt.Fprintf(&b, "Chaos run on %s, commit %s: SEED=%d DURATION=%s, %d clusters, %d steps each (replay: %s).\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), commit, cfg.seed, cfg.duration, cfg.clusters, cfg.steps(), cfg.replay())
	actions, faults, totals := map[chaosAction]int{}, map[chaosFault]int{}, map[invariant]int{}
	passed, steps, checks, violations, converged := 0, 0, 0, 0, 0
	fmt.Fprintf(&b, "| cluster | result | steps done | convergence checks | invariant checks | violations | time | of it quiet |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, o := range outs {
		n := 0
		for inv, c := range o.checks {
			totals[inv] += c
			n += c
		}
		for a, c := range o.cc.actions {
			actions[a] += c
		}
		for f, c := range o.cc.faults {
			faults[f] += c
		}
		verdict := "FAIL"
		if o.passed {
			verdict, passed = "pass", passed+1
		}
		steps, checks, violations, converged = steps+o.cc.done, checks+n, violations+o.violations, converged+o.cc.converged
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %d | %d | %d | %s | %s |\n", strings.TrimPrefix(o.name, "TestChaos/"), verdict,
			o.cc.done, o.planned, o.cc.converged, n, o.violations, o.took.Round(time.Second), o.cc.quietFor.Round(time.Second))
	}
	fmt.Fprintf(&b, "\n| action | steps done |\n|---|---:|\n")
	for _, w := range chaosWeights {
		fmt.Fprintf(&b, "| %s | %d |\n", w.action, actions[w.action])
	}
	fmt.Fprintf(&b, "\n| fault | steps done |\n|---|---:|\n")
	for _, f := range []chaosFault{fltNone, fltKill, fltPD5xx, fltPDSlow, fltPDStale, fltPDUnreachable, fltPodDeleted, fltJobPodDeleted} {
		fmt.Fprintf(&b, "| %s | %d |\n", f, faults[f])
	}
	fmt.Fprintf(&b, "\n| invariant | checks |\n|---|---:|\n")
	for _, inv := range allInvariants {
		fmt.Fprintf(&b, "| %s | %d |\n", inv, totals[inv])
	}
	fmt.Fprintf(&b, "\nchaos SEED=%d DURATION=%s: clusters %d, passed %d, failed %d; steps %d of %d; convergence checks %d; "+
		"invariant checks %d; violations %d; wall time %s\n\nPlan:\n%s", cfg.seed, cfg.duration, len(outs), passed, len(outs)-passed,
		steps, cfg.clusters*cfg.steps(), converged, checks, violations, took.Round(time.Second), planText(plans))
	t.Logf("chaos figures:\n%s", b.String())
	dir := filepath.Join(framework.RepoRoot(), "_output", "faults")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("figures dir: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "chaos.md"), []byte(b.String()), 0o644); err != nil {
		t.Errorf("write chaos figures: %v", err)
	}
}
