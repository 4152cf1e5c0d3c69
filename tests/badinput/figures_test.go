//go:build integration

package badinput

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// figures are one kind's counts: its cases, those the API server rejected,
// those accepted and reported (invalid, or a missing reference) with
// nothing written, and those that stopped no other object: every case that
// passed, since the healthy cluster converged and every other case was
// resolved while it existed, and, for the kinds with a sentinel, only when
// the sentinel of that kind was reconciled beside it.
type figures struct {
	cases, rejected, reported, neverStopped, failing int
}

// writeFigures prints the per-kind table to the test log and writes it to
// _output/badinput/figures.md, from which docs/reliability.md is refreshed.
func writeFigures(t *testing.T, results []*result, reconciled map[string]bool, took time.Duration) {
	t.Helper()
	byKind := map[string]*figures{}
	for _, k := range kinds {
		byKind[k] = &figures{}
	}
	var total figures
	for _, r := range results {
		f := byKind[corpus.KindOf(r.c)]
		f.cases++
		switch {
		case r.problem != "":
			f.failing++
		case r.outcome == corpus.Rejected:
			f.rejected++
		case r.outcome == corpus.Invalid || (r.outcome == corpus.Reported && corpus.KindOf(r.c) != "TidbCluster"):
			f.reported++
		}
		_, hasSentinel := sentinelObjects[corpus.KindOf(r.c)]
		if r.problem == "" && (!hasSentinel || reconciled[corpus.KindOf(r.c)]) {
			f.neverStopped++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| kind | cases | rejected at admission | reported without writes | built (valid or reported) | never stopping another object | failing |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range kinds {
		f := byKind[k]
		built := f.cases - f.rejected - f.reported - f.failing
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", k, f.cases, f.rejected, f.reported, built, f.neverStopped, f.failing)
		total.cases += f.cases
		total.rejected += f.rejected
		total.reported += f.reported
		total.neverStopped += f.neverStopped
		total.failing += f.failing
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d | %d | %d |\n", total.cases, total.rejected, total.reported,
		total.cases-total.rejected-total.reported-total.failing, total.neverStopped, total.failing)
	fmt.Fprintf(&b, "\n%d cases of %d kinds; wall time %s\n", total.cases, len(kinds), took.Round(time.Second))
	t.Logf("bad-input figures:\n%s", b.String())
	dir := filepath.Join(framework.RepoRoot(), "_output", "badinput")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("figures dir: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "figures.md"), []byte(b.String()), 0o644); err != nil {
		t.Errorf("write figures: %v", err)
	}
}
