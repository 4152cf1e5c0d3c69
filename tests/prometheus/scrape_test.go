//go:build integration

package prometheus

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestPrometheusScrapesTheControllerManager runs the operator on
// examples/basic, has a real Prometheus scrape it, and checks the series of
// docs/user-guide.md "Metrics" through Prometheus' query API, including that
// a spec change reaches Prometheus. promtool must accept the exposition.
func TestPrometheusScrapesTheControllerManager(t *testing.T) {
	prom, promtool := ensurePrometheus(t)
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	mgr := operator.StartManager(t, env.Namespace, func(o *app.Options) { o.LeaderElect = false })
	ns, target := env.Namespace, mgr.Options.MetricsAddr
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), ns)
	srv := startPrometheus(t, prom, target)

	scraped := func(s sample) bool {
		return s.Metric["job"] == "tidb-controller-manager" && s.Metric["instance"] == target
	}
	cases := []struct {
		desc, query string
		check       func(t *testing.T, got []sample) bool
	}{
		{"reconcile outcomes of the tidbcluster controller", `controller_runtime_reconcile_total{controller="tidbcluster"}`,
			func(t *testing.T, got []sample) bool {
				for _, s := range got {
					if !scraped(s) || !slices.Contains([]string{"success", "error", "requeue"}, s.Metric["result"]) {
						t.Errorf("unexpected series %v", s.Metric)
					}
				}
				return len(got) > 0
			}},
		{"reconcile duration histogram", `controller_runtime_reconcile_time_seconds_bucket{controller="tidbcluster"}`,
			func(t *testing.T, got []sample) bool {
				return len(got) > 2 && slices.ContainsFunc(got, func(s sample) bool { return scraped(s) && s.Metric["le"] == "+Inf" })
			}},
		{"workqueue depth of the tidbcluster queue", `workqueue_depth{name="tidbcluster"}`,
			func(t *testing.T, got []sample) bool { return len(got) == 1 && scraped(got[0]) }},
		{"desired TiKV replicas of basic", `tidb_operator_cluster_spec_replicas{component="tikv",name="basic",namespace="` + ns + `"}`,
			func(t *testing.T, got []sample) bool {
				return len(got) == 1 && scraped(got[0]) && got[0].value() == "3"
			}},
		{"desired replicas of every component", `count(tidb_operator_cluster_spec_replicas{name="basic",namespace="` + ns + `"})`,
			func(t *testing.T, got []sample) bool { return len(got) == 1 && got[0].value() == "3" }},
	}
	for _, c := range cases {
		framework.WaitFor(t, env.Ctx, time.Minute, "Prometheus has "+c.desc, func(ctx context.Context) (bool, error) {
			got, err := srv.query(ctx, c.query)
			if err != nil {
				return false, err
			}
			framework.Observef(ctx, "%s: %d series %v", c.query, len(got), got)
			return c.check(t, got), nil
		})
	}

	framework.Kubectl(t, "-n", ns, "patch", "tc", "basic", "--type", "merge", "-p", `{"spec":{"tikv":{"replicas":5}}}`)
	framework.WaitFor(t, env.Ctx, time.Minute, "Prometheus sees 5 desired TiKV replicas", func(ctx context.Context) (bool, error) {
		got, err := srv.query(ctx, `tidb_operator_cluster_spec_replicas{component="tikv",name="basic",namespace="`+ns+`"}`)
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "%v", got)
		return len(got) == 1 && got[0].value() == "5", nil
	})

	code, body, err := httpGet(env.Ctx, "http://"+target+"/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", code, err)
	}
	if out, err := promtoolCheck(promtool, body); err != nil || out != "" {
		t.Errorf("promtool check metrics is not clean (%v):\n%s", err, out)
	}
}
