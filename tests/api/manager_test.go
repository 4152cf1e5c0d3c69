//go:build integration

package api

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func TestControllerManagerLeadsSyncsAndServes(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	mgr := operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx

	framework.WaitFor(t, ctx, 60*time.Second, "the manager holds the Lease", func(ctx context.Context) (bool, error) {
		lease, err := env.Kube.CoordinationV1().Leases(env.Namespace).Get(ctx, "tidb-controller-manager", metav1.GetOptions{})
		if err != nil {
			framework.Observef(ctx, "lease: %v", err)
			return false, nil
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	})
	framework.WaitFor(t, ctx, 60*time.Second, "/readyz returns 200", func(ctx context.Context) (bool, error) {
		code, body, err := mgr.Get(ctx, mgr.Options.HealthAddr, "/readyz")
		framework.Observef(ctx, "readyz %d %q %v", code, body, err)
		return err == nil && code == 200, nil
	})

	framework.ApplyYAMLFile(t, ctx, framework.RepoRoot()+"/examples/basic/tidb-cluster.yaml", env.Namespace)
	framework.WaitFor(t, ctx, 60*time.Second, "status.observedGeneration of basic", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "status %+v", tc.Status.Conditions)
		return tc.Status.ObservedGeneration == tc.Generation &&
			meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady) != nil, nil
	})

	// A zero data volume passes the CRD's admission rules (they require
	// requests.storage, not its sign) and fails the operator's validation.
	bad := "apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata: {name: nostorage}\n" +
		"spec: {version: v8.5.0, pd: {replicas: 1, requests: {storage: \"0\"}}}\n"
	framework.ApplyYAML(t, ctx, bad, env.Namespace)
	framework.WaitFor(t, ctx, 60*time.Second, "nostorage is Degraded with InvalidSpec", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "nostorage", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterDegraded)
		framework.Observef(ctx, "degraded %+v", c)
		return c != nil && c.Reason == "InvalidSpec" && strings.Contains(c.Message, "spec.pd.requests.storage"), nil
	})
	framework.WaitFor(t, ctx, 60*time.Second, "a FailedValidation event", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": "nostorage", "reason": "FailedValidation"}.String(),
		})
		if err != nil {
			return false, err
		}
		return len(events.Items) > 0 && events.Items[0].Type == corev1.EventTypeWarning, nil
	})

	code, _, err := mgr.Get(ctx, mgr.Options.HealthAddr, "/healthz")
	if err != nil || code != 200 {
		t.Fatalf("/healthz: %d %v", code, err)
	}
	// The worker counts a sync after it returns, so the event above may be seen before the counter moves.
	wants := []string{
		`controller_runtime_reconcile_total{controller="tidbcluster",result="requeue"}`, // basic waits for PD: no simulator here
		`controller_runtime_reconcile_total{controller="tidbcluster",result="error"}`,
		`controller_runtime_reconcile_time_seconds_bucket{controller="tidbcluster"`,
		`workqueue_adds_total{name="tidbcluster"}`,
		`workqueue_depth{name="backup"}`,
		`tidb_operator_cluster_spec_replicas{component="tikv",name="basic",namespace="` + env.Namespace + `"} 3`,
		"go_goroutines", "process_resident_memory_bytes",
	}
	var body string
	framework.WaitFor(t, ctx, 30*time.Second, "/metrics has every expected series", func(ctx context.Context) (bool, error) {
		code, b, err := mgr.Get(ctx, mgr.Options.MetricsAddr, "/metrics")
		if err != nil || code != 200 {
			framework.Observef(ctx, "/metrics: %d %v", code, err)
			return false, nil
		}
		body = b
		for _, want := range wants {
			if !strings.Contains(body, want) {
				framework.Observef(ctx, "/metrics lacks %s", want)
				return false, nil
			}
		}
		return true, nil
	})
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
