package tiproxyapi

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// DefaultParallelism is how many TiProxy pods GetHealthOfPods checks at once when not told otherwise.
const DefaultParallelism = podhttp.DefaultParallelism

// GetHealthOfPods checks the health of the given pods of TidbCluster namespace/tcName with c, at most
// parallelism (DefaultParallelism when ≤ 0) at a time, so that N down proxies cost about one timeout
// instead of N. It returns every pod's health — unhealthy, with the error as reason, for a pod whose
// check failed — and the errors of GetHealth joined (nil when none), so a caller may use the partial
// result. No retries.
func GetHealthOfPods(ctx context.Context, c Client, namespace, tcName string, pods []string, opts Options,
	parallelism int) (map[string]Health, error) {
	return podhttp.EachPod(ctx, pods, parallelism, func(ctx context.Context, pod string) (Health, error) {
		h, err := c.GetHealth(ctx, namespace, tcName, pod, opts)
		if err != nil {
			h = Health{Reason: err.Error()}
		}
		return h, err
	})
}
