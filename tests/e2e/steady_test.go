//go:build integration

package e2e

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// resourceVersions returns the resourceVersion of the cluster and of every
// object it owns, keyed by kind/name.
func resourceVersions(t *testing.T, ctx context.Context, env *framework.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	ns := env.Namespace
	opts := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=basic"}
	for _, l := range []struct {
		kind string
		list func() (runtime.Object, error)
	}{
		{"StatefulSet", func() (runtime.Object, error) { return env.Kube.AppsV1().StatefulSets(ns).List(ctx, opts) }},
		{"Service", func() (runtime.Object, error) { return env.Kube.CoreV1().Services(ns).List(ctx, opts) }},
		{"ConfigMap", func() (runtime.Object, error) { return env.Kube.CoreV1().ConfigMaps(ns).List(ctx, opts) }},
		{"Deployment", func() (runtime.Object, error) { return env.Kube.AppsV1().Deployments(ns).List(ctx, opts) }},
	} {
		list, err := l.list()
		if err != nil {
			t.Fatalf("list %ss: %v", l.kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range items {
			o, err := meta.Accessor(item)
			if err != nil {
				t.Fatal(err)
			}
			out[l.kind+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	tc, err := versioned.NewForConfigOrDie(env.Config).PingcapV1alpha1().TidbClusters(ns).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out["TidbCluster/basic"] = tc.ResourceVersion
	if len(out) < 10 {
		t.Fatalf("expected the cluster's objects, found %v", out)
	}
	return out
}

// syncCount reads how many syncs of basic the manager has finished.
func syncCount(ctx context.Context, mgr *operator.Manager, namespace string) (float64, error) {
	_, body, err := mgr.Get(ctx, mgr.Options.MetricsAddr, "/metrics")
	if err != nil {
		return 0, err
	}
	re := regexp.MustCompile(`tidb_operator_cluster_syncs_total\{name="basic",namespace="` + regexp.QuoteMeta(namespace) + `",outcome="done"\} (\d+)`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return 0, nil
	}
	return strconv.ParseFloat(m[1], 64)
}

// waitSyncs waits until the manager finished n more syncs of basic.
func waitSyncs(t *testing.T, ctx context.Context, env *framework.Env, mgr *operator.Manager, n float64) {
	t.Helper()
	start, err := syncCount(ctx, mgr, env.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, ctx, time.Minute, "more completed syncs", func(ctx context.Context) (bool, error) {
		got, err := syncCount(ctx, mgr, env.Namespace)
		framework.Observef(ctx, "syncs %v (started at %v)", got, start)
		return got >= start+n, err
	})
}

// checkNoWritesWhenConverged first waits until the Ready cluster settles —
// region leaders keep balancing for a few seconds after the stores come up,
// and the leader counts are part of status; the settle window of four
// syncs spans a member refresh (10s, see operator.StartManager), so a
// change PD reports is seen in it — then lets the manager sync it three
// more times (resyncs every 5s) and asserts that neither the cluster
// nor any object it owns changed: a converged sync writes nothing.
func checkNoWritesWhenConverged(t *testing.T, ctx context.Context, env *framework.Env, mgr *operator.Manager) {
	t.Helper()
	framework.WaitFor(t, ctx, 2*time.Minute, "the cluster settles", func(ctx context.Context) (bool, error) {
		a := resourceVersions(t, ctx, env)
		waitSyncs(t, ctx, env, mgr, 4)
		b := resourceVersions(t, ctx, env)
		return cmp.Equal(a, b), nil
	})
	pc := versioned.NewForConfigOrDie(env.Config).PingcapV1alpha1().TidbClusters(env.Namespace)
	tcBefore, err := pc.Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := resourceVersions(t, ctx, env)
	waitSyncs(t, ctx, env, mgr, 3)
	after := resourceVersions(t, ctx, env)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s was written while converged (resourceVersion %s → %s)", k, v, after[k])
		}
	}
	if tcAfter, err := pc.Get(ctx, "basic", metav1.GetOptions{}); err == nil {
		if diff := cmp.Diff(tcBefore.Status, tcAfter.Status); diff != "" {
			t.Errorf("status changed while converged (-before +after):\n%s", diff)
		}
	}
}
