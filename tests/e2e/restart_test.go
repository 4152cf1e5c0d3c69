//go:build integration

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// slowRegionMigration makes Offline stores of basic take d to become
// Tombstone (timings of this cluster only, so tests sharing the simulator
// keep theirs).
func slowRegionMigration(t *testing.T, env *framework.Env, sim *simclient.Client, d time.Duration) {
	t.Helper()
	slow := api.Duration(d)
	if _, err := sim.SetClusterTimings(env.Ctx, env.Namespace, "basic", api.TimingsUpdate{RegionMigrationTime: &slow}); err != nil {
		t.Fatalf("slow down region migration: %v", err)
	}
}

// waitSim waits until the simulated cluster satisfies cond.
func waitSim(t *testing.T, env *framework.Env, sim *simclient.Client, desc string, cond func(st *simState) bool) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		st, err := sim.Cluster(ctx, env.Namespace, "basic")
		if err != nil {
			return false, nil
		}
		return cond(st), nil
	})
}

// TestOperatorRestartMidUpgradeAndMidScaleIn stops the operator while a
// TiKV store is evicting leaders for a restart, and again while a store is
// going Offline for a scale-in; a new operator process finishes both from
// what it observes, leaving no scheduler behind and no pod removed early.
func TestOperatorRestartMidUpgradeAndMidScaleIn(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	first := operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	watchCtx, stop := context.WithCancel(env.Ctx)
	w := &watchInvariants{}
	done := make(chan struct{})
	go func() { defer close(done); w.run(watchCtx, env, sim) }()

	patchSpec(t, env, pc, map[string]any{"version": "v8.5.1"})
	waitSim(t, env, sim, "a store evicting leaders", func(st *simState) bool {
		for _, s := range st.Stores {
			if s.Evicting {
				return true
			}
		}
		return false
	})
	if err := first.Stop(); err != nil {
		t.Fatalf("stop the first operator: %v", err)
	}
	second := operator.StartManager(t, env.Namespace, nil)
	waitReady(t, env, pc, "the second operator finishes the upgrade", func(tc *v1alpha1.TidbCluster) bool {
		return imagesAre(env, "tikv", "v8.5.1")(tc) && imagesAre(env, "tidb", "v8.5.1")(tc) && tc.Status.TiKV.Phase == v1alpha1.NormalPhase
	})

	// PD keeps 3 replicas, so a scale-in needs a fourth store first.
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"replicas": 4}})
	waitReady(t, env, pc, "TiKV scaled out to 4", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 4 })
	// Keep the store Offline long enough that the wait below cannot miss it.
	slowRegionMigration(t, env, sim, 20*time.Second)
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"replicas": 3}})
	waitSim(t, env, sim, "a store going Offline", func(st *simState) bool {
		for _, s := range st.Stores {
			if s.StateName == "Offline" {
				return true
			}
		}
		return false
	})
	if err := second.Stop(); err != nil {
		t.Fatalf("stop the second operator: %v", err)
	}
	operator.StartManager(t, env.Namespace, nil)
	waitReady(t, env, pc, "the third operator finishes the scale-in", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.TiKV.StatefulSet.Replicas == 3 && len(tc.Status.TiKV.TombstoneStores) == 1
	})
	stop()
	<-done
	w.check(t)
	st, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Schedulers {
		if strings.HasPrefix(s, "evict-leader-scheduler") {
			t.Errorf("evict-leader scheduler left behind: %s", s)
		}
	}
}
