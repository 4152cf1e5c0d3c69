//go:build integration

package faults

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// lifecycleCase is a lifecycle change, the step at which the scenario breaks something, and what
// must hold once the cluster converged again.
type lifecycleCase struct {
	name      string
	component string // the component the change is about (the pod-deleted fault deletes one of its pods)
	step      string // the observed step, for the docs
	opts      scOptions
	change    func(s *sc) // starts the change
	reached   func(s *sc) // returns once the step is observed
	resume    func(s *sc) // after the break: ends what slowed the step down, if anything
	verify    func(s *sc) // after convergence
}

// slowMigration keeps an Offline store Offline until resume speeds it up, so the step can be seen.
func slowMigration(t *simulator.Timings) { t.RegionMigrationTime = time.Hour }

func fastMigration(s *sc) { s.setTimings(api.TimingsUpdate{RegionMigrationTime: dur(time.Second)}) }

func fastFailover(o *app.Options) {
	o.Controller.PDFailoverPeriod = time.Second
	o.Controller.TiKVFailoverPeriod = time.Second
}

// lifecycleCases are the operator's lifecycle steps; kill, SIGKILL, Lease hand-over, PD faults and
// control-plane restarts are applied to them.
func lifecycleCases() map[string]lifecycleCase {
	upgrade := func(component, step string, reached func(s *sc)) lifecycleCase {
		return lifecycleCase{name: component + "-upgrade", step: step,
			change:  func(s *sc) { s.patch(map[string]any{component: map[string]any{"version": "v8.5.1"}}) },
			reached: reached,
			verify:  func(s *sc) { s.expectImages(component, "v8.5.1") },
		}
	}
	cases := []lifecycleCase{
		{name: "tikv-scale-in", step: "store of basic-tikv-3 Offline in PD",
			opts:    scOptions{tikv: 4, timings: slowMigration},
			change:  func(s *sc) { s.patch(map[string]any{"tikv": map[string]any{"replicas": 3}}) },
			reached: func(s *sc) { s.waitSim("basic-tikv-3's store Offline", storeState("basic-tikv-3", "Offline")) },
			resume:  fastMigration,
			verify: func(s *sc) {
				if id := storeOf(s.mustState(), "basic-tikv-3"); id != 0 {
					s.t.Errorf("basic-tikv-3 still has live store %d", id)
				}
			},
		},
		{name: "tikv-scale-out", step: "TiKV StatefulSet at 4 replicas",
			change:  func(s *sc) { s.patch(map[string]any{"tikv": map[string]any{"replicas": 4}}) },
			reached: func(s *sc) { s.waitSTS("tikv", "TiKV StatefulSet at 4", replicasAre(4)) },
			verify:  func(s *sc) { expectUpStores(s, 4) },
		},
		{name: "pd-scale-in", step: "PD member basic-pd-4 deleted from PD",
			opts:   scOptions{pd: 5},
			change: func(s *sc) { s.patch(map[string]any{"pd": map[string]any{"replicas": 3}}) },
			reached: func(s *sc) {
				s.waitSim("a PD member deleted", func(st *api.ClusterState) bool { return len(st.Members) < 5 })
			},
			verify: func(s *sc) { expectMembers(s, 3) },
		},
		{name: "pd-scale-out", step: "PD StatefulSet at 5 replicas",
			change:  func(s *sc) { s.patch(map[string]any{"pd": map[string]any{"replicas": 5}}) },
			reached: func(s *sc) { s.waitSTS("pd", "PD StatefulSet at 5", replicasAre(5)) },
			verify:  func(s *sc) { expectMembers(s, 5) },
		},
		upgrade("pd", "PD StatefulSet partition moved (a member restarting)", func(s *sc) { s.waitSTS("pd", "PD partition moved", partitionMoved) }),
		upgrade("tikv", "a TiKV store evicting leaders", func(s *sc) { s.waitSim("a store evicting leaders", anyEvicting) }),
		upgrade("tidb", "TiDB StatefulSet partition moved", func(s *sc) { s.waitSTS("tidb", "TiDB partition moved", partitionMoved) }),
		{name: "tikv-config-rollout", step: "TiKV StatefulSet partition moved by a config change",
			change: func(s *sc) {
				s.patch(map[string]any{"tikv": map[string]any{"config": map[string]any{"log-level": "warn"}}})
			},
			reached: func(s *sc) { s.waitSTS("tikv", "TiKV partition moved", partitionMoved) },
		},
		{name: "tikv-failover", step: "failure store recorded in status",
			opts: scOptions{manager: fastFailover, tcMutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.MaxFailoverCount = ptr(int32(1)) }},
			change: func(s *sc) {
				if err := s.sim.SetStoreDown(s.env.Ctx, s.env.Namespace, "basic", storeOf(s.mustState(), "basic-tikv-1"), true); err != nil {
					s.t.Fatal(err)
				}
			},
			reached: func(s *sc) {
				s.waitTC("a failure store recorded", func(tc *v1alpha1.TidbCluster) bool { return len(tc.Status.TiKV.FailureStores) == 1 })
			},
			resume: func(s *sc) {
				s.waitTC("the failover store Up", func(tc *v1alpha1.TidbCluster) bool {
					return tc.Status.TiKV.StatefulSet != nil && tc.Status.TiKV.StatefulSet.Replicas == 4 && upStores(tc) == 3
				})
				if err := s.sim.SetStoreDown(s.env.Ctx, s.env.Namespace, "basic", storeOf(s.mustState(), "basic-tikv-1"), false); err != nil {
					s.t.Fatal(err)
				}
				tc, err := s.tc(s.env.Ctx)
				if err != nil {
					s.t.Fatal(err)
				}
				s.patch(map[string]any{"tikv": map[string]any{"failover": map[string]any{"recoverByUID": string(tc.Status.TiKV.FailoverUID)}}})
			},
		},
		{name: "pd-failover", step: "the operator's DELETE of the failed PD member (seen by the proxy)",
			opts: scOptions{manager: fastFailover, tcMutate: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.MaxFailoverCount = ptr(int32(1)) }},
			change: func(s *sc) {
				if err := s.sim.SetMemberUnhealthy(s.env.Ctx, s.env.Namespace, "basic", "basic-pd-1", true); err != nil {
					s.t.Fatal(err)
				}
			},
			reached: func(s *sc) {
				// The rebuilt member rejoins within a second, so the step is the operator's DELETE itself.
				framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "the operator deletes basic-pd-1 from PD", func(context.Context) (bool, error) {
					return s.route.memberDeletes.Load() > 0, nil
				})
			},
			verify: func(s *sc) { expectMembers(s, 3) },
		},
	}
	out := map[string]lifecycleCase{}
	for _, c := range cases {
		out[c.name] = c
	}
	return out
}

// killScenarios: the in-process operator is stopped abruptly at each lifecycle step and a new one
// finishes the change from what it observes.
func killScenarios() []scenario {
	var out []scenario
	for _, name := range []string{"tikv-scale-in", "tikv-scale-out", "pd-scale-in", "pd-scale-out", "pd-upgrade",
		"tikv-upgrade", "tidb-upgrade", "tikv-config-rollout", "tikv-failover", "pd-failover"} {
		c := lifecycleCases()[name]
		out = append(out, scenario{
			name:           "kill/" + name,
			asserts:        "operator context cancelled at: " + c.step + "; a new operator converges",
			representative: name == "tikv-scale-in",
			run: func(t *testing.T) {
				s := start(t, c.opts)
				c.change(s)
				c.reached(s)
				s.restartManager()
				finish(s, c)
			},
		})
	}
	return out
}

// finish ends the fault of c, waits for convergence and runs c's own checks.
func finish(s *sc, c lifecycleCase) {
	s.t.Helper()
	if c.resume != nil {
		c.resume(s)
	}
	s.waitConverged("converged after " + c.name)
	if c.verify != nil {
		c.verify(s)
	}
}

func storeState(pod, state string) func(*api.ClusterState) bool {
	return func(st *api.ClusterState) bool {
		s := liveStore(st, pod)
		return s != nil && s.StateName == state
	}
}

func replicasAre(n int32) func(*appsv1.StatefulSet) bool {
	return func(sts *appsv1.StatefulSet) bool { return sts.Spec.Replicas != nil && *sts.Spec.Replicas == n }
}

func upStores(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, s := range tc.Status.TiKV.Stores {
		if s.State == "Up" {
			n++
		}
	}
	return n
}

func expectUpStores(s *sc, n int) {
	s.t.Helper()
	up := 0
	for _, st := range s.mustState().Stores {
		if st.StateName == "Up" {
			up++
		}
	}
	if up != n {
		s.t.Errorf("%d Up stores in PD, want %d", up, n)
	}
}

func expectMembers(s *sc, n int) {
	s.t.Helper()
	st := s.mustState()
	healthy := 0
	for _, m := range st.Members {
		if m.Healthy {
			healthy++
		}
	}
	if len(st.Members) != n || healthy != n {
		s.t.Errorf("PD has %d members (%d healthy), want %d healthy: %+v", len(st.Members), healthy, n, st.Members)
	}
}

func ptr[T any](v T) *T { return &v }
