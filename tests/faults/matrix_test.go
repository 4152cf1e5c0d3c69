//go:build integration

package faults

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// stepFault is one fault applied at the observed step of a lifecycle case: "a lifecycle step × a
// fault". apply breaks something, waits until the operator met it, and ends it.
type stepFault struct {
	name, what string
	// excuse lists invariants the fault itself breaks (still evaluated and counted).
	excuse []invariant
	// prepare, when set, edits the scenario's options before it starts (a real operator process).
	prepare func(o *scOptions, r *faultRun)
	apply   func(s *sc, c lifecycleCase, r *faultRun)
}

// faultRun is what a fault keeps between prepare and apply.
type faultRun struct{ proc *operatorProcess }

func stepFaults() map[string]stepFault {
	out := map[string]stepFault{
		"kill": {name: "kill", what: "operator context cancelled; a new operator converges",
			apply: func(s *sc, _ lifecycleCase, _ *faultRun) { s.restartManager() }},
		"sigkill": {name: "sigkill", what: "real tidb-controller-manager process SIGKILLed by PID; a second process takes the Lease once it expires",
			prepare: func(o *scOptions, r *faultRun) {
				o.startOperator = func(s *sc) { r.proc = s.startOperatorProcess("operator-1") }
			},
			apply: func(s *sc, _ lifecycleCase, r *faultRun) {
				holder, err := s.leaseHolder(s.env.Ctx)
				if err != nil || holder == "" {
					s.t.Fatalf("Lease holder before the kill: %q, %v", holder, err)
				}
				r.proc.kill(s.t)
				s.startOperatorProcess("operator-2")
				s.waitLeaseMoved(holder)
			}},
		"pod-deleted": {name: "pod-deleted", what: "the component's pod of ordinal 0 deleted (as a user or a node drain would) until recreated",
			excuse: []invariant{invTiProxyOneDown},
			apply:  func(s *sc, c lifecycleCase, _ *faultRun) { s.deletePod(c.component + "-0") }},
	}
	for _, f := range pdFaults() {
		out["pd-"+f.name] = stepFault{name: "pd-" + f.name, what: f.what + ", until the operator met it in several syncs",
			apply: func(s *sc, _ lifecycleCase, _ *faultRun) { f.on(s); f.observed(s); f.off(s) }}
	}
	for _, comp := range []string{"ticdc", "pump", "tiproxy"} {
		out[comp+"-5xx"] = stepFault{name: comp + "-5xx", what: "every request to the " + comp + " API answered 503, for 10 failed operator requests",
			apply: func(s *sc, _ lifecycleCase, _ *faultRun) {
				if _, err := s.sim.AddFault(s.env.Ctx, s.env.Namespace, "basic", api.Fault{Kind: api.FaultError, Component: comp, Status: 503, Body: "injected"}); err != nil {
					s.t.Fatal(err)
				}
				s.waitOperatorRequests(10, true, "the operator meets 10 failed "+comp+" requests")
				if err := s.sim.ClearFaults(s.env.Ctx, s.env.Namespace, "basic"); err != nil {
					s.t.Fatal(err)
				}
			}}
	}
	return out
}

// matrix is the table of component scenarios: for each fault, the lifecycle cases it breaks.
var matrix = []struct {
	fault string
	cases []string
}{
	{"kill", []string{"tiflash-scale-in", "tiflash-scale-out", "tiflash-upgrade", "ticdc-scale-in", "ticdc-scale-out", "ticdc-upgrade",
		"pump-scale-in", "pump-scale-out", "pump-upgrade", "tiproxy-scale-in", "tiproxy-scale-out", "tiproxy-upgrade"}},
	{"sigkill", []string{"ticdc-scale-in", "pump-scale-in"}},
	{"pd-5xx", []string{"tiflash-scale-in", "tiflash-upgrade", "ticdc-scale-in", "pump-scale-in"}},
	{"pd-slow", []string{"tiflash-scale-in", "pump-scale-in"}},
	{"pd-stale", []string{"tiflash-scale-in"}},
	{"pd-unreachable", []string{"tiflash-scale-in", "ticdc-upgrade", "pump-scale-in"}},
	{"ticdc-5xx", []string{"ticdc-scale-in", "ticdc-upgrade"}},
	{"pump-5xx", []string{"pump-scale-in"}},
	{"tiproxy-5xx", []string{"tiproxy-upgrade"}},
	{"pod-deleted", []string{"tiflash-scale-in", "ticdc-upgrade", "pump-scale-in", "tiproxy-upgrade"}},
}

// representativeMatrix are the matrix scenarios of `make test`'s subset (quick ones).
var representativeMatrix = []string{"kill/ticdc-scale-in"}

// matrixScenarios expands the matrix: start the case's cluster, start its change, wait for its step,
// apply the fault, then converge and run the case's checks.
func matrixScenarios() []scenario {
	cases := map[string]lifecycleCase{}
	for _, c := range componentCases() {
		cases[c.name] = c
	}
	faults := stepFaults()
	var out []scenario
	for _, row := range matrix {
		f := faults[row.fault]
		for _, name := range row.cases {
			c, ok := cases[name]
			if !ok {
				panic("matrix: no lifecycle case " + name)
			}
			out = append(out, scenario{
				name:           f.name + "/" + c.name,
				asserts:        f.what + ", at: " + c.step,
				representative: slices.Contains(representativeMatrix, f.name+"/"+c.name),
				run:            func(t *testing.T) { runStepFault(t, c, f) },
			})
		}
	}
	return out
}

func runStepFault(t *testing.T, c lifecycleCase, f stepFault) {
	o := c.opts
	o.excuse = slices.Concat(o.excuse, f.excuse)
	r := &faultRun{}
	if f.prepare != nil {
		f.prepare(&o, r)
	}
	s := start(t, o)
	c.change(s)
	c.reached(s)
	f.apply(s, c, r)
	finish(s, c)
}

// deletePod deletes basic-<name> as a user would (the checker does not blame the operator for it)
// and waits until its StatefulSet recreated it.
func (s *sc) deletePod(name string) {
	s.t.Helper()
	pod := "basic-" + name
	p, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).Get(s.env.Ctx, pod, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", pod, err)
	}
	s.chk.userDeleted(p.UID)
	if err := s.env.Kube.CoreV1().Pods(s.env.Namespace).Delete(s.env.Ctx, pod, metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("delete pod %s: %v", pod, err)
	}
	s.waitRecreated(pod+" recreated", p.UID, func(ctx context.Context) (types.UID, error) {
		p, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return p.UID, nil
	})
}
