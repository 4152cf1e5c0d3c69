//go:build integration

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestTiFlashClusterStartsWithPlacementRulesOff applies examples/tiflash
// with `replication.enable-placement-rules = false` in spec.pd.config. A
// real PD started so refuses to turn the rules on (500 ErrNotBootstrapped)
// until a TiKV store registered; TiFlash, synced before TiKV, must not wait
// for that, or TiKV is never created and the cluster never starts. The
// cluster must reach Ready with its TiFlash stores Up and the rules on.
func TestTiFlashClusterStartsWithPlacementRulesOff(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: tiflashTC}
	operator.StartManager(t, env.Namespace, nil)
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "tiflash", "tidb-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pdConfig := "  pd:\n    baseImage: pingcap/pd\n    replicas: 1\n    maxFailoverCount: 0\n    requests:\n      storage: 10Gi\n    config: {}\n"
	if !strings.Contains(string(raw), pdConfig) {
		t.Fatalf("examples/tiflash changed; its pd section is no longer\n%s", pdConfig)
	}
	manifest := strings.Replace(string(raw), pdConfig, strings.Replace(pdConfig, "config: {}",
		"config: |\n      [replication]\n      enable-placement-rules = false", 1), 1)
	framework.ApplyYAML(t, env.Ctx, manifest, env.Namespace)

	f.waitReady(t, "the cluster is Ready with its 2 TiFlash stores Up and its TiKV store", func(tc *v1alpha1.TidbCluster) bool {
		return upTiFlash(tc) == 2 && len(tc.Status.TiKV.Stores) == 1
	})
	st, err := f.sim.Cluster(env.Ctx, env.Namespace, tiflashTC)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Config.EnablePlacementRules {
		t.Error("TiFlash stores are Up but PD's placement rules are still off")
	}
}
