//go:build integration

package e2e

import (
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestTLSClusterWithItsOwnCA gives a TLS cluster cert Secrets of its own CA, one the simulator was not
// given: the simulator serves each component with the cluster's own server Secret and checks the
// operator's client certificate against that Secret's ca.crt, so the cluster reaches Ready over HTTPS
// only if both sides use the per-cluster certificates.
func TestTLSClusterWithItsOwnCA(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "ownca"}
	operator.StartManager(t, env.Namespace, nil)
	own := framework.NewCA(t, "ownca's own CA")
	framework.CreateSecrets(t, env.Ctx, env.Kube, own.ClusterSecrets(t, env.Namespace, f.name, "pd", "tikv", "tidb")...)
	framework.ApplyYAML(t, env.Ctx, strings.ReplaceAll(tlsClusterYAML, "NAME", f.name), env.Namespace)
	f.waitReady(t, "TLS cluster with its own CA is Ready", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 3 })
	f.checkTLSOnly(t, "pd", "tidb")
}
