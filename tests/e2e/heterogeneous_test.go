//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestHeterogeneousClusterJoinsReferencedPD applies examples/basic, then examples/heterogeneous (TiKV 2,
// TiFlash 1, TiDB 1 and no PD, joining basic's PD): both reach Ready, basic's PD lists the heterogeneous
// stores under their own names, and a heterogeneous TiKV scale-in 2→1 takes the leaving store Tombstone in
// basic's PD before its pod goes.
func TestHeterogeneousClusterJoinsReferencedPD(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	pc := versioned.NewForConfigOrDie(env.Config)
	sim := startSimulator(t, env)
	ref := &clusterFixture{env: env, pc: pc, sim: sim, name: "basic"}
	het := &clusterFixture{env: env, pc: pc, sim: sim, name: "hetero"}
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), env.Namespace)
	ref.waitReady(t, "basic is Ready", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 3 })
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "heterogeneous", "tidb-cluster.yaml"), env.Namespace)
	het.waitReady(t, "hetero is Ready with 2 TiKV and 1 TiFlash stores Up", func(tc *v1alpha1.TidbCluster) bool {
		return upStoresOf(tc) == 2 && upTiFlash(tc) == 1
	})
	checkHeteroStores(t, ref, env.Namespace, 2, 1)
	checkNoHeteroPD(t, env.Namespace)

	violations := ref.watchPodOutlives(t, "hetero-tikv-1", tikvStoreHeld("hetero-tikv-1"))
	het.patch(t, "tikv", `{"replicas":1}`)
	het.waitReady(t, "hetero TiKV scaled in: the leaving store Tombstone in basic's PD", func(tc *v1alpha1.TidbCluster) bool {
		return upStoresOf(tc) == 1 && len(tc.Status.TiKV.TombstoneStores) == 1 && tc.Status.TiKV.StatefulSet.Replicas == 1
	})
	if v := violations(); v != "" {
		t.Error(v)
	}
	st := checkHeteroStores(t, ref, env.Namespace, 1, 1)
	if held := tikvStoreHeld("hetero-tikv-1")(st); held != "" || !hasStoreOf(st, "hetero-tikv-1") {
		t.Errorf("basic's PD after the scale-in: want hetero-tikv-1's store Tombstone, got %q in %+v", held, st.Stores)
	}
	ref.waitReady(t, "basic is still Ready with its 3 stores", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 3 })
}

// checkHeteroStores asserts basic's PD lists kv TiKV and tiflash TiFlash stores of hetero that are not
// Tombstone, each advertising hetero's own names.
func checkHeteroStores(t *testing.T, ref *clusterFixture, ns string, kv, tiflash int) *api.ClusterState {
	t.Helper()
	st, err := ref.sim.Cluster(ref.env.Ctx, ns, ref.name)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range st.Stores {
		if !strings.HasPrefix(s.PodName, "hetero-") || s.StateName == "Tombstone" {
			continue
		}
		count[s.Engine]++
		want := fmt.Sprintf("%s.hetero-%s-peer.%s.svc:", s.PodName, s.Engine, ns)
		if !strings.HasPrefix(s.Address, want) {
			t.Errorf("store %d of %s advertises %s, want %s…", s.ID, s.PodName, s.Address, want)
		}
	}
	if count["tikv"] != kv || count["tiflash"] != tiflash {
		t.Errorf("basic's PD lists hetero stores %v, want %d TiKV and %d TiFlash: %+v", count, kv, tiflash, st.Stores)
	}
	return st
}

// checkNoHeteroPD asserts that hetero's own PD address does not answer: it has no PD.
func checkNoHeteroPD(t *testing.T, ns string) {
	t.Helper()
	proxy, _ := url.Parse("http://" + simAddr)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://hetero-pd."+ns+":2379/pd/api/v1/health", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("hetero-pd answered %d, want 502: the heterogeneous cluster has no PD", resp.StatusCode)
	}
}

// tikvStoreHeld says what TiKV store of pod PD still has that is not Tombstone.
func tikvStoreHeld(pod string) func(st *api.ClusterState) string {
	return func(st *api.ClusterState) string {
		for _, s := range st.Stores {
			if s.PodName == pod && s.Engine == "tikv" && s.StateName != "Tombstone" {
				return fmt.Sprintf("its TiKV store %d was %s", s.ID, s.StateName)
			}
		}
		return ""
	}
}

func hasStoreOf(st *api.ClusterState, pod string) bool {
	for _, s := range st.Stores {
		if s.PodName == pod {
			return true
		}
	}
	return false
}
