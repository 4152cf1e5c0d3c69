//go:build integration

// Package faults is the fault suite: each scenario deploys a TidbCluster on the real control plane
// (kube-apiserver, etcd, kube-controller-manager, kube-scheduler, KWOK) with its own PD/TiKV/TiDB
// simulator, breaks something at an observed lifecycle step — the operator, the control plane, PD,
// or owned objects — and asserts safety invariants for the whole scenario (checker_test.go), then
// convergence once the fault ends. docs/reliability.md lists the scenarios and the last figures.
//
// FAULTS selects the scenarios: unset runs the representative subset (what `make test` runs),
// "all" every scenario (`make faults`), "bugs" only those exposing known bugs, otherwise a
// comma-separated list of name fragments; "chaos" runs chaos mode alone (chaos_test.go), which
// FAULTS unset runs a short fixed-seed slice of. FAULTS_PARALLEL (default 4) bounds concurrent scenarios.
package faults

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// proxy is the suite's HTTP proxy between every operator and the simulators (HTTP_PROXY).
var proxy *pdProxy

func pdProxyOf(t *testing.T) *pdProxy {
	t.Helper()
	if proxy == nil {
		t.Fatal("the faults proxy is not running")
	}
	return proxy
}

func TestMain(m *testing.M) {
	p, err := startPDProxy()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		os.Exit(1)
	}
	proxy = p
	// Go reads the proxy environment once, so it is set before any request of this process.
	_ = os.Setenv("HTTP_PROXY", p.URL())
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", envOr("KUBETIDB_TEST_V", "0"))
	flag.Parse()
	if !flagSet("test.parallel") {
		_ = flag.Set("test.parallel", envOr("FAULTS_PARALLEL", "4"))
	}
	framework.Main(m)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// scenario is one entry of the suite.
type scenario struct {
	name    string
	asserts string // beyond the invariants every scenario checks; docs/reliability.md
	// representative scenarios run in the default subset (`make test`).
	representative bool
	// bug names a known operator bug the scenario exposes; it fails until the fix lands and is not in
	// the default subset.
	bug string
	run func(t *testing.T)
}

func allScenarios() []scenario {
	var all []scenario
	for _, group := range [][]scenario{killScenarios(), processScenarios(), pdFaultScenarios(), editScenarios(), controlPlaneScenarios(), bugScenarios(), regressionScenarios(),
		matrixScenarios(), backupScenarios(), takeoverScenarios(), dmScenarios()} {
		all = append(all, group...)
	}
	return all
}

// selectScenarios applies FAULTS.
func selectScenarios(all []scenario) (picked []scenario, desc string) {
	sel := os.Getenv("FAULTS")
	for _, s := range all {
		switch sel {
		case "":
			if s.representative {
				picked = append(picked, s)
			}
		case "all":
			picked = append(picked, s)
		case "bugs":
			if s.bug != "" {
				picked = append(picked, s)
			}
		default:
			for _, frag := range strings.Split(sel, ",") {
				if frag != "" && strings.Contains(s.name, frag) {
					picked = append(picked, s)
					break
				}
			}
		}
	}
	if sel == "" {
		sel = "representative subset (FAULTS=all runs every scenario)"
	}
	return picked, fmt.Sprintf("FAULTS=%s: %d of %d scenarios", sel, len(picked), len(all))
}

// TestFaults runs the selected scenarios, in parallel, and writes the figures when all have ended.
func TestFaults(t *testing.T) {
	if os.Getenv("FAULTS") == "chaos" {
		t.Skip("FAULTS=chaos runs TestChaos only")
	}
	picked, desc := selectScenarios(allScenarios())
	t.Log(desc)
	if len(picked) == 0 {
		t.Fatalf("%s: nothing selected", desc)
	}
	begin := time.Now()
	t.Cleanup(func() { writeFigures(t, desc, time.Since(begin)) })
	t.Cleanup(func() { stopPrivateControlPlane(t) })
	for _, s := range picked {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			// Registered first, so it runs last: after the scenario's checker reported. A scenario
			// that fails before its checker started is still in the figures (0 checks).
			begin := time.Now()
			t.Cleanup(func() { recordResult(t, time.Since(begin)) })
			if s.bug != "" {
				t.Logf("exposes a known bug: %s", s.bug)
			}
			s.run(t)
		})
	}
}
