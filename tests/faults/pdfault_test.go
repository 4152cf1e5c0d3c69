//go:build integration

package faults

import (
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// pdFault is a way PD misbehaves towards the operator; on starts it, observed waits until the
// operator has met it in several syncs, off ends it.
type pdFault struct {
	name     string
	what     string
	on, off  func(s *sc)
	observed func(s *sc)
}

func pdFaults() []pdFault {
	addFault := func(f api.Fault) func(s *sc) {
		return func(s *sc) {
			if _, err := s.sim.AddFault(s.env.Ctx, s.env.Namespace, "basic", f); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	clear := func(s *sc) {
		if err := s.sim.ClearFaults(s.env.Ctx, s.env.Namespace, "basic"); err != nil {
			s.t.Fatal(err)
		}
	}
	unreachable := func(v bool) func(s *sc) {
		return func(s *sc) {
			if err := s.sim.SetPDUnreachable(s.env.Ctx, s.env.Namespace, "basic", v); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	failed := func(s *sc) { s.waitOperatorRequests(10, true, "the operator meets 10 failed PD requests") }
	sent := func(s *sc) { s.waitOperatorRequests(30, false, "the operator sends 30 requests") }
	return []pdFault{
		{name: "unreachable", what: "every PD address refuses connections", on: unreachable(true), off: unreachable(false), observed: failed},
		{name: "slow", what: "every PD request delayed 3s", on: addFault(api.Fault{Kind: api.FaultLatency, Component: "pd", Delay: api.Duration(3 * time.Second)}),
			off: clear, observed: func(s *sc) { s.waitOperatorRequests(10, false, "the operator sends 10 slow requests") }},
		{name: "5xx", what: "every PD request answered 503", on: addFault(api.Fault{Kind: api.FaultError, Component: "pd", Status: 503, Body: "injected"}),
			off: clear, observed: failed},
		{name: "stale", what: "PD reads answered with the last answer recorded before the fault (writes pass)",
			on: func(s *sc) { s.route.stale.Store(true) }, off: func(s *sc) { s.route.stale.Store(false) }, observed: sent},
	}
}

// pdFaultScenarios: each PD fault during a TiKV scale-in (the store's migration completes in PD
// while the operator cannot see it) and during a TiKV rolling upgrade; plus a store Down mid-upgrade.
func pdFaultScenarios() []scenario {
	var out []scenario
	for _, f := range pdFaults() {
		for _, name := range []string{"tikv-scale-in", "tikv-upgrade"} {
			c := lifecycleCases()[name]
			out = append(out, scenario{
				name:           "pd-" + f.name + "/" + name,
				asserts:        f.what + ", from: " + c.step + ", until the operator met it in several syncs; converges after",
				representative: f.name == "5xx" && name == "tikv-upgrade",
				run: func(t *testing.T) {
					s := start(t, c.opts)
					c.change(s)
					c.reached(s)
					f.on(s)
					f.observed(s)
					if name == "tikv-scale-in" {
						// The truth moves on behind the fault: the store becomes Tombstone in PD.
						c.resume(s)
						s.waitSim("basic-tikv-3's store Tombstone", func(st *api.ClusterState) bool { return liveStore(st, "basic-tikv-3") == nil })
						f.observed(s)
					}
					f.off(s)
					finish(s, c)
				},
			})
		}
	}
	return append(out, scenario{
		name:    "store-down/tikv-upgrade",
		asserts: "basic-tikv-0's store forced Down after the first TiKV pod restarted; no other TiKV pod restarts until it is Up again; converges after",
		run: func(t *testing.T) {
			s := start(t, scOptions{})
			s.patch(map[string]any{"tikv": map[string]any{"version": "v8.5.1"}})
			s.waitSTS("tikv", "the first TiKV pod restarted", func(sts *appsv1.StatefulSet) bool { return sts.Status.UpdatedReplicas >= 1 })
			id := storeOf(s.mustState(), "basic-tikv-0")
			if err := s.sim.SetStoreDown(s.env.Ctx, s.env.Namespace, "basic", id, true); err != nil {
				t.Fatal(err)
			}
			s.waitTC("the operator sees the store Down", func(tc *v1alpha1.TidbCluster) bool {
				return tc.Status.TiKV.Stores[strconv.FormatUint(id, 10)].State == "Down"
			})
			s.waitOperatorRequests(30, false, "the operator runs several syncs with the store Down")
			if err := s.sim.SetStoreDown(s.env.Ctx, s.env.Namespace, "basic", id, false); err != nil {
				t.Fatal(err)
			}
			s.waitConverged("the upgrade finishes once the store is Up")
			s.expectImages("tikv", "v8.5.1")
		},
	})
}
