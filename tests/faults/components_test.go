//go:build integration

package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// extra is a component added to examples/basic, with its spec taken from the example that shows it
// (examples/tiflash, ticdc, binlog, tiproxy) and replicas when > 0.
type extra struct {
	component string
	replicas  int32
}

// exampleOf names the example whose TidbCluster carries each extra component.
var exampleOf = map[string]string{"tiflash": "tiflash", "ticdc": "ticdc", "pump": "binlog", "tiproxy": "tiproxy"}

// addExtras copies each extra component's spec from its example into tc; Pump also turns TiDB's binlog on.
func addExtras(tc *v1alpha1.TidbCluster, extras []extra) error {
	for _, e := range extras {
		raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", exampleOf[e.component], "tidb-cluster.yaml"))
		if err != nil {
			return fmt.Errorf("example of %s: %w", e.component, err)
		}
		ex := &v1alpha1.TidbCluster{}
		if err := yaml.Unmarshal(raw, ex); err != nil {
			return fmt.Errorf("parse the example of %s: %w", e.component, err)
		}
		var replicas *int32
		switch e.component {
		case "tiflash":
			tc.Spec.TiFlash, replicas = ex.Spec.TiFlash, &ex.Spec.TiFlash.Replicas
		case "ticdc":
			tc.Spec.TiCDC, replicas = ex.Spec.TiCDC, &ex.Spec.TiCDC.Replicas
		case "pump":
			tc.Spec.Pump, replicas = ex.Spec.Pump, &ex.Spec.Pump.Replicas
			tc.Spec.TiDB.BinlogEnabled = ptr(true)
		case "tiproxy":
			tc.Spec.TiProxy, replicas = ex.Spec.TiProxy, &ex.Spec.TiProxy.Replicas
		default:
			return fmt.Errorf("no example for component %q", e.component)
		}
		if e.replicas > 0 {
			*replicas = e.replicas
		}
	}
	return nil
}

// extrasConverged extends converged to the extra components the spec has: each phase Normal and
// each StatefulSet at spec.replicas with every pod updated and ready.
func (s *sc) extrasConverged(ctx context.Context, tc *v1alpha1.TidbCluster) (bool, string) {
	type want struct {
		phase    v1alpha1.MemberPhase
		replicas int32
	}
	wanted := map[string]want{}
	if tc.Spec.TiFlash != nil {
		wanted["tiflash"] = want{tc.Status.TiFlash.Phase, tc.Spec.TiFlash.Replicas}
	}
	if tc.Spec.TiCDC != nil {
		wanted["ticdc"] = want{tc.Status.TiCDC.Phase, tc.Spec.TiCDC.Replicas}
	}
	if tc.Spec.Pump != nil {
		wanted["pump"] = want{tc.Status.Pump.Phase, tc.Spec.Pump.Replicas}
	}
	if tc.Spec.TiProxy != nil {
		wanted["tiproxy"] = want{tc.Status.TiProxy.Phase, tc.Spec.TiProxy.Replicas}
	}
	for c, w := range wanted {
		if w.phase != v1alpha1.NormalPhase {
			return false, fmt.Sprintf("%s phase %q", c, w.phase)
		}
		sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(ctx, "basic-"+c, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if why := stsAt(sts, w.replicas); why != "" {
			return false, why
		}
	}
	return true, ""
}

// templateOn: the StatefulSet's template runs the component's image with tag and its controller has
// seen it (the rollout started; the fault then falls somewhere in it).
func templateOn(component, tag string) func(*appsv1.StatefulSet) bool {
	return func(sts *appsv1.StatefulSet) bool {
		for _, c := range sts.Spec.Template.Spec.Containers {
			if c.Name == component && strings.HasSuffix(c.Image, ":"+tag) {
				return sts.Status.ObservedGeneration == sts.Generation
			}
		}
		return false
	}
}

// slowPumpOffline makes a closing pump take 15 s of PD-reachable time to go offline; the simulator
// fixes that time when the pump starts closing, so it cannot be shortened afterwards.
func slowPumpOffline(t *simulator.Timings) { t.PumpOfflineTime = 15 * time.Second }

func capture(st *api.ClusterState, pod string) *api.Capture {
	for i := range st.Captures {
		if st.Captures[i].PodName == pod {
			return &st.Captures[i]
		}
	}
	return nil
}

func pumpNode(st *api.ClusterState, pod string) *api.PumpNode {
	for i := range st.PumpNodes {
		if st.PumpNodes[i].PodName == pod {
			return &st.PumpNodes[i]
		}
	}
	return nil
}

// componentCases are the lifecycle steps of TiFlash, TiCDC, Pump and TiProxy that the fault matrix
// (matrix_test.go) breaks.
func componentCases() []lifecycleCase {
	var out []lifecycleCase
	for _, group := range [][]lifecycleCase{tiflashCases(), ticdcCases(), pumpCases(), tiproxyCases()} {
		out = append(out, group...)
	}
	return out
}

func tiflashCases() []lifecycleCase {
	return []lifecycleCase{
		{name: "tiflash-scale-in", component: "tiflash", step: "store of basic-tiflash-2 Offline in PD",
			opts:    scOptions{extras: []extra{{"tiflash", 3}}, timings: slowMigration},
			change:  func(s *sc) { s.patch(map[string]any{"tiflash": map[string]any{"replicas": 2}}) },
			reached: func(s *sc) { s.waitSim("basic-tiflash-2's store Offline", storeState("basic-tiflash-2", "Offline")) },
			resume:  fastMigration,
			verify: func(s *sc) {
				if id := storeOf(s.mustState(), "basic-tiflash-2"); id != 0 {
					s.t.Errorf("basic-tiflash-2 still has live store %d", id)
				}
			},
		},
		{name: "tiflash-scale-out", component: "tiflash", step: "TiFlash StatefulSet at 3 replicas",
			opts:    scOptions{extras: []extra{{"tiflash", 2}}},
			change:  func(s *sc) { s.patch(map[string]any{"tiflash": map[string]any{"replicas": 3}}) },
			reached: func(s *sc) { s.waitSTS("tiflash", "TiFlash StatefulSet at 3", replicasAre(3)) },
			verify:  func(s *sc) { expectEngineUp(s, "tiflash", 3) },
		},
		{name: "tiflash-upgrade", component: "tiflash", step: "TiFlash StatefulSet partition moved",
			opts:    scOptions{extras: []extra{{"tiflash", 2}}},
			change:  func(s *sc) { s.patch(map[string]any{"tiflash": map[string]any{"version": "v8.5.1"}}) },
			reached: func(s *sc) { s.waitSTS("tiflash", "TiFlash partition moved", partitionMoved) },
			verify:  func(s *sc) { s.expectImages("tiflash", "v8.5.1"); expectEngineUp(s, "tiflash", 2) },
		},
	}
}

// balanced waits until pod's capture replicates tables, so that its drain is a step that can be seen.
func balanced(s *sc, pod string) {
	s.waitSim(pod+"'s capture holds tables", func(st *api.ClusterState) bool {
		c := capture(st, pod)
		return c != nil && c.Tables > 0
	})
}

func fastTiCDCDrain(s *sc) { s.setTimings(api.TimingsUpdate{TiCDCDrainTime: dur(time.Second)}) }

func ticdcCases() []lifecycleCase {
	anyDraining := func(st *api.ClusterState) bool {
		for _, c := range st.Captures {
			if c.Draining {
				return true
			}
		}
		return false
	}
	return []lifecycleCase{
		{name: "ticdc-scale-in", component: "ticdc", step: "the capture of basic-ticdc-2 draining",
			opts: scOptions{extras: []extra{{"ticdc", 3}}},
			change: func(s *sc) {
				balanced(s, "basic-ticdc-2")
				s.setTimings(api.TimingsUpdate{TiCDCDrainTime: dur(time.Hour)})
				s.patch(map[string]any{"ticdc": map[string]any{"replicas": 2}})
			},
			reached: func(s *sc) {
				s.waitSim("basic-ticdc-2's capture draining", func(st *api.ClusterState) bool {
					c := capture(st, "basic-ticdc-2")
					return c != nil && c.Draining
				})
			},
			resume: fastTiCDCDrain,
			verify: func(s *sc) { expectCaptures(s, 2) },
		},
		{name: "ticdc-scale-out", component: "ticdc", step: "TiCDC StatefulSet at 4 replicas",
			opts:    scOptions{extras: []extra{{"ticdc", 3}}},
			change:  func(s *sc) { s.patch(map[string]any{"ticdc": map[string]any{"replicas": 4}}) },
			reached: func(s *sc) { s.waitSTS("ticdc", "TiCDC StatefulSet at 4", replicasAre(4)) },
			verify:  func(s *sc) { expectCaptures(s, 4) },
		},
		{name: "ticdc-upgrade", component: "ticdc", step: "a capture draining for its restart",
			opts: scOptions{extras: []extra{{"ticdc", 3}}},
			change: func(s *sc) {
				balanced(s, "basic-ticdc-2")
				s.setTimings(api.TimingsUpdate{TiCDCDrainTime: dur(time.Hour)})
				s.patch(map[string]any{"ticdc": map[string]any{"version": "v8.5.1"}})
			},
			reached: func(s *sc) { s.waitSim("a capture draining", anyDraining) },
			resume:  fastTiCDCDrain,
			verify:  func(s *sc) { s.expectImages("ticdc", "v8.5.1"); expectCaptures(s, 3) },
		},
	}
}

func pumpCases() []lifecycleCase {
	return []lifecycleCase{
		{name: "pump-scale-in", component: "pump", step: "the pump of basic-pump-1 closing after the operator's offline request",
			opts:   scOptions{extras: []extra{{"pump", 2}}, timings: slowPumpOffline},
			change: func(s *sc) { s.patch(map[string]any{"pump": map[string]any{"replicas": 1}}) },
			reached: func(s *sc) {
				s.waitSim("basic-pump-1 closing", func(st *api.ClusterState) bool {
					n := pumpNode(st, "basic-pump-1")
					return n != nil && n.ProcessState == "closing"
				})
			},
			verify: func(s *sc) {
				if n := pumpNode(s.mustState(), "basic-pump-1"); n == nil || n.State != "offline" {
					s.t.Errorf("basic-pump-1's pump is %+v, want offline", n)
				}
			},
		},
		{name: "pump-scale-out", component: "pump", step: "Pump StatefulSet at 3 replicas",
			opts:    scOptions{extras: []extra{{"pump", 2}}},
			change:  func(s *sc) { s.patch(map[string]any{"pump": map[string]any{"replicas": 3}}) },
			reached: func(s *sc) { s.waitSTS("pump", "Pump StatefulSet at 3", replicasAre(3)) },
			verify:  func(s *sc) { expectOnlinePumps(s, 3) },
		},
		{name: "pump-upgrade", component: "pump", step: "the Pump StatefulSet's new template seen by its controller",
			opts:    scOptions{extras: []extra{{"pump", 2}}},
			change:  func(s *sc) { s.patch(map[string]any{"pump": map[string]any{"version": "v8.5.1"}}) },
			reached: func(s *sc) { s.waitSTS("pump", "Pump template on v8.5.1", templateOn("pump", "v8.5.1")) },
			verify:  func(s *sc) { s.expectImages("pump", "v8.5.1"); expectOnlinePumps(s, 2) },
		},
	}
}

func tiproxyCases() []lifecycleCase {
	return []lifecycleCase{
		{name: "tiproxy-scale-in", component: "tiproxy", step: "TiProxy StatefulSet at 2 replicas",
			opts:    scOptions{extras: []extra{{"tiproxy", 3}}},
			change:  func(s *sc) { s.patch(map[string]any{"tiproxy": map[string]any{"replicas": 2}}) },
			reached: func(s *sc) { s.waitSTS("tiproxy", "TiProxy StatefulSet at 2", replicasAre(2)) },
			verify:  func(s *sc) { expectHealthyProxies(s, 2) },
		},
		{name: "tiproxy-scale-out", component: "tiproxy", step: "TiProxy StatefulSet at 3 replicas",
			opts:    scOptions{extras: []extra{{"tiproxy", 2}}},
			change:  func(s *sc) { s.patch(map[string]any{"tiproxy": map[string]any{"replicas": 3}}) },
			reached: func(s *sc) { s.waitSTS("tiproxy", "TiProxy StatefulSet at 3", replicasAre(3)) },
			verify:  func(s *sc) { expectHealthyProxies(s, 3) },
		},
		{name: "tiproxy-upgrade", component: "tiproxy", step: "the TiProxy StatefulSet's new template seen by its controller",
			opts:    scOptions{extras: []extra{{"tiproxy", 3}}},
			change:  func(s *sc) { s.patch(map[string]any{"tiproxy": map[string]any{"version": "v1.3.1"}}) },
			reached: func(s *sc) { s.waitSTS("tiproxy", "TiProxy template on v1.3.1", templateOn("tiproxy", "v1.3.1")) },
			verify:  func(s *sc) { s.expectImages("tiproxy", "v1.3.1"); expectHealthyProxies(s, 3) },
		},
	}
}

func expectEngineUp(s *sc, engine string, n int) {
	s.t.Helper()
	up := 0
	for _, st := range s.mustState().Stores {
		if st.Engine == engine && st.StateName == "Up" {
			up++
		}
	}
	if up != n {
		s.t.Errorf("%d Up %s stores in PD, want %d", up, engine, n)
	}
}

func expectCaptures(s *sc, n int) {
	s.t.Helper()
	if st := s.mustState(); len(st.Captures) != n {
		s.t.Errorf("%d TiCDC captures, want %d: %+v", len(st.Captures), n, st.Captures)
	}
}

func expectOnlinePumps(s *sc, n int) {
	s.t.Helper()
	online := 0
	for _, p := range s.mustState().PumpNodes {
		if p.State == "online" {
			online++
		}
	}
	if online != n {
		s.t.Errorf("%d online pumps, want %d", online, n)
	}
}

func expectHealthyProxies(s *sc, n int) {
	s.t.Helper()
	healthy := 0
	for _, p := range s.mustState().TiProxyServers {
		if p.Healthy {
			healthy++
		}
	}
	if healthy != n {
		s.t.Errorf("%d healthy TiProxy servers, want %d", healthy, n)
	}
}
