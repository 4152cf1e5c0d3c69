//go:build integration

package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestLostEvictLeaderSchedulerIsAddedAgain rolls TiKV (a config change)
// with leaders draining slowly, and removes the evict-leader scheduler of
// the first store seen evicting through PD's own API, as a user or a
// restored PD would lose it. The operator must add it again while the pod
// waits — without it the leaders never leave and the restart waits for the
// whole evictLeaderTimeout (25 h by default) — so the rollout ends within
// the test's timeout, with no pod stopped while its store led regions.
func TestLostEvictLeaderSchedulerIsAddedAgain(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	slow := api.Duration(30 * time.Second)
	if _, err := sim.SetClusterTimings(env.Ctx, env.Namespace, "basic", api.TimingsUpdate{LeaderDrainTime: &slow}); err != nil {
		t.Fatal(err)
	}
	initial, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	before := podUIDs(t, env, "tikv")

	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"config": map[string]any{"log": map[string]any{"level": "warn"}}}})
	var evicting api.Store
	waitSim(t, env, sim, "a TiKV store evicting its leaders", func(st *simState) bool {
		for _, s := range st.Stores {
			if s.Engine == "tikv" && s.Evicting && s.LeaderCount > 0 {
				evicting = s
				return true
			}
		}
		return false
	})
	removeEvictLeaderScheduler(t, env, evicting.ID)
	waitSim(t, env, sim, fmt.Sprintf("store %d evicting again", evicting.ID), func(st *simState) bool {
		for _, s := range st.Stores {
			if s.ID == evicting.ID {
				return s.Evicting || s.LeaderCount == 0
			}
		}
		return false
	})
	waitEvent(t, env, corev1.EventTypeNormal, tikv.ReasonEvictLeaderBegin, "added it again")

	waitReady(t, env, pc, "every TiKV pod restarted on the new config", func(tc *v1alpha1.TidbCluster) bool {
		now := podUIDs(t, env, "tikv")
		for pod, uid := range before {
			if now[pod] == uid || now[pod] == types.UID("") {
				return false
			}
		}
		return tc.Status.TiKV.Phase == v1alpha1.NormalPhase
	})
	rolled, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	checkNoStoreRestartedWithLeaders(t, initial, rolled)
}

// removeEvictLeaderScheduler sends PD's own request to remove store id's
// evict-leader scheduler, through the simulator as the operator reaches it.
func removeEvictLeaderScheduler(t *testing.T, env *framework.Env, id uint64) {
	t.Helper()
	proxy, err := url.Parse("http://" + simAddr)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	req, err := http.NewRequestWithContext(env.Ctx, http.MethodDelete,
		fmt.Sprintf("http://basic-pd.%s:2379/pd/api/v1/schedulers/evict-leader-scheduler-%d", env.Namespace, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PD answered %s to removing the evict-leader scheduler of store %d", resp.Status, id)
	}
}
