//go:build integration

package faults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// result is what one scenario contributes to the figures.
type result struct {
	name       string
	passed     bool
	checks     map[invariant]int
	violations int
	duration   time.Duration
}

var results struct {
	sync.Mutex
	all    []result
	checks map[string]result // by test name, until the scenario ends
}

// recordChecks keeps the checker's figures of the scenario t until recordResult.
func recordChecks(t *testing.T, checks map[invariant]int, violations int) {
	results.Lock()
	defer results.Unlock()
	if results.checks == nil {
		results.checks = map[string]result{}
	}
	results.checks[t.Name()] = result{checks: checks, violations: violations}
}

// recordResult records the scenario t once it has ended, with its checker's figures if it got as
// far as starting one.
func recordResult(t *testing.T, took time.Duration) {
	results.Lock()
	defer results.Unlock()
	r := results.checks[t.Name()]
	delete(results.checks, t.Name())
	r.name, r.passed, r.duration = t.Name(), !t.Failed(), took
	results.all = append(results.all, r)
}

// writeFigures prints the figures table (scenarios, checks per invariant, violations) to the test
// log and to _output/faults/figures.md, from which docs/reliability.md is refreshed.
func writeFigures(t *testing.T, selection string, took time.Duration) {
	results.Lock()
	rs := append([]result(nil), results.all...)
	results.Unlock()
	sort.Slice(rs, func(i, j int) bool { return rs[i].name < rs[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "Run on %s, commit %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), commitOf())
	totals := map[invariant]int{}
	passed, violations, checks := 0, 0, 0
	fmt.Fprintf(&b, "| scenario | result | invariant checks | violations | time |\n|---|---|---:|---:|---:|\n")
	for _, r := range rs {
		n := 0
		for inv, c := range r.checks {
			totals[inv] += c
			n += c
		}
		checks += n
		violations += r.violations
		verdict := "FAIL"
		if r.passed {
			verdict, passed = "pass", passed+1
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s |\n", strings.TrimPrefix(r.name, "TestFaults/"), verdict, n, r.violations,
			r.duration.Round(time.Second))
	}
	fmt.Fprintf(&b, "\n| invariant | checks |\n|---|---:|\n")
	for _, inv := range allInvariants {
		fmt.Fprintf(&b, "| %s | %d |\n", inv, totals[inv])
	}
	fmt.Fprintf(&b, "\n%s; scenarios run %d, passed %d, failed %d; invariant checks %d; violations %d; wall time %s\n",
		selection, len(rs), passed, len(rs)-passed, checks, violations, took.Round(time.Second))
	t.Logf("fault suite figures:\n%s", b.String())
	dir := filepath.Join(framework.RepoRoot(), "_output", "faults")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("figures dir: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "figures.md"), []byte(b.String()), 0o644); err != nil {
		t.Errorf("write figures: %v", err)
	}
}

// commitOf is the short commit checked out (`git rev-parse --short HEAD`), marked when the tree has
// uncommitted changes, so that published figures say exactly what code they describe.
func commitOf() string {
	root := framework.RepoRoot()
	head, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	commit := strings.TrimSpace(string(head))
	if dirty, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(dirty) > 0 {
		commit += " with uncommitted changes"
	}
	return commit
}
