//go:build integration

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// e2eCA signs the simulator's server certificates and the TLS clusters' cert Secrets; startSimulator
// creates it once per test binary.
var e2eCA *framework.CA

// e2eTLSAuthority creates e2eCA and the simulator's TLSAuthority over it.
func e2eTLSAuthority(t *testing.T) *simulator.TLSAuthority {
	t.Helper()
	e2eCA = framework.NewCA(t, "kubetidb e2e CA")
	a, err := simulator.NewTLSAuthority(e2eCA.CertPEM, e2eCA.KeyPEM)
	if err != nil {
		t.Fatalf("simulator TLS authority: %v", err)
	}
	return a
}

// tlsClusterYAML is a cluster with mutual TLS between components and TLS for MySQL clients: three PD
// members (leader transfer), three TiKV stores (PD's three replicas) and one TiDB.
const tlsClusterYAML = `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: NAME
spec:
  version: v8.5.0
  tlsCluster: {enabled: true}
  pd: {baseImage: pingcap/pd, replicas: 3, requests: {storage: 1Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 3, requests: {storage: 1Gi}, config: {}}
  tidb: {baseImage: pingcap/tidb, replicas: 1, tlsClient: {enabled: true}, config: {}}
`

func TestTLSClusterLifecycleOverHTTPS(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "secure"}
	operator.StartManager(t, env.Namespace, nil)
	framework.CreateSecrets(t, env.Ctx, env.Kube, e2eCA.ClusterSecrets(t, env.Namespace, f.name, "pd", "tikv", "tidb")...)
	framework.ApplyYAML(t, env.Ctx, strings.ReplaceAll(tlsClusterYAML, "NAME", f.name), env.Namespace)
	// A second cluster whose operator client certificate is missing.
	framework.ApplyYAML(t, env.Ctx, strings.ReplaceAll(tlsClusterYAML, "NAME", "nocert"), env.Namespace)

	f.waitReady(t, "TLS cluster is Ready", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 3 })
	f.checkTLSOnly(t, "pd", "tidb")
	f.checkPDDashboardTLS(t)
	checkMissingSecretNamed(t, f, "nocert", "nocert-cluster-client-secret")

	f.patch(t, "tikv", `{"replicas":4}`)
	f.waitReady(t, "TiKV scaled out to 4 Up stores", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 4 })
	f.patch(t, "tikv", `{"replicas":3}`)
	f.waitReady(t, "TiKV scaled in: the leaving store Tombstone over HTTPS", func(tc *v1alpha1.TidbCluster) bool {
		return upStoresOf(tc) == 3 && len(tc.Status.TiKV.TombstoneStores) == 1 && tc.Status.TiKV.StatefulSet.Replicas == 3
	})

	before, err := f.sim.Cluster(env.Ctx, env.Namespace, f.name)
	if err != nil {
		t.Fatal(err)
	}
	evictions := f.watchEvictions(t)
	body := `{"spec":{"version":"v8.5.1"}}`
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, f.name, "application/merge-patch+json", []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, "TLS cluster upgraded to v8.5.1", func(*v1alpha1.TidbCluster) bool {
		return f.podsRun(t, "pd", "v8.5.1", 3) && f.podsRun(t, "tikv", "v8.5.1", 3) && f.podsRun(t, "tidb", "v8.5.1", 1)
	})
	if n := evictions(); n == 0 {
		t.Error("no TiKV store was seen evicting leaders during the upgrade")
	}
	after := f.checkTLSOnly(t, "pd", "tidb")
	if !leaderTransferredSince(before, after) {
		t.Errorf("PD leadership never moved through the transfer API during the upgrade; changes: %+v", after.LeaderChanges)
	}
}

// checkTLSOnly asserts that the simulated cluster speaks TLS only, that every component of comps was
// asked over TLS (client certificate checked by the handshake) and that no plain request reached it.
func (f *clusterFixture) checkTLSOnly(t *testing.T, comps ...string) *api.ClusterState {
	t.Helper()
	st, err := f.sim.Cluster(f.env.Ctx, f.env.Namespace, f.name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("TLS requests: %+v", st.TLS)
	if !st.TLS.Enabled || st.TLS.PlainRefused != 0 {
		t.Errorf("simulator TLS stats %+v: want TLS on and no plain HTTP request", st.TLS)
	}
	for _, c := range comps {
		if st.TLS.Requests[c] == 0 {
			t.Errorf("no request reached %s over TLS: %+v", c, st.TLS.Requests)
		}
	}
	for _, m := range st.Members {
		if !strings.HasPrefix(m.ClientURL, "https://") {
			t.Errorf("PD member %s advertises %s", m.Name, m.ClientURL)
		}
	}
	return st
}

// checkPDDashboardTLS asserts PD mounts the TiDB client certificate for its dashboard.
func (f *clusterFixture) checkPDDashboardTLS(t *testing.T) {
	t.Helper()
	sts, err := f.env.Kube.AppsV1().StatefulSets(f.env.Namespace).Get(f.env.Ctx, f.name+"-pd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range sts.Spec.Template.Spec.Volumes {
		found = found || v.Secret != nil && v.Secret.SecretName == f.name+"-tidb-client-secret"
	}
	if !found {
		t.Errorf("PD's pods do not mount %s-tidb-client-secret: %+v", f.name, sts.Spec.Template.Spec.Volumes)
	}
}

// checkMissingSecretNamed waits until TidbCluster name is not Ready and a condition that holds back
// (Ready False, Progressing or Degraded True) names the missing Secret.
func checkMissingSecretNamed(t *testing.T, f *clusterFixture, name, secret string) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, time.Minute, "a condition of "+name+" names "+secret, func(ctx context.Context) (bool, error) {
		tc, err := f.pc.PingcapV1alpha1().TidbClusters(f.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "conditions %+v", tc.Status.Conditions)
		if ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady); ready == nil || ready.Status == metav1.ConditionTrue {
			return false, nil
		}
		for _, c := range tc.Status.Conditions {
			if c.Status == metav1.ConditionTrue && strings.Contains(c.Message, secret) || strings.Contains(c.Message, secret) && c.Type == v1alpha1.TidbClusterReady {
				t.Logf("condition %s names %s: %s", c.Type, secret, c.Message)
				return true, nil
			}
		}
		return false, nil
	})
}

// watchEvictions samples the simulator until the test ends and returns how many evicting stores it saw.
func (f *clusterFixture) watchEvictions(t *testing.T) func() int {
	ctx, stop := context.WithCancel(f.env.Ctx)
	var mu sync.Mutex
	seen := map[uint64]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		poll(ctx, func(ctx context.Context) bool {
			st, err := f.sim.Cluster(ctx, f.env.Namespace, f.name)
			if err == nil {
				mu.Lock()
				for _, s := range st.Stores {
					seen[s.ID] = seen[s.ID] || s.Evicting
				}
				mu.Unlock()
			}
			return ctx.Err() == nil
		})
	}()
	t.Cleanup(func() { stop(); <-done })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, e := range seen {
			if e {
				n++
			}
		}
		return n
	}
}

// leaderTransferredSince reports whether a PD leader change through the transfer API happened after
// before was read.
func leaderTransferredSince(before, after *api.ClusterState) bool {
	var last uint64
	if n := len(before.LeaderChanges); n > 0 {
		last = before.LeaderChanges[n-1].Seq
	}
	for _, c := range after.LeaderChanges {
		if c.Seq > last && c.Cause == api.LeaderCauseTransfer {
			return true
		}
	}
	return false
}
