package tidbapi

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// DefaultParallelism is how many TiDB pods GetHealthOfPods checks at once when not told otherwise.
const DefaultParallelism = podhttp.DefaultParallelism

// GetHealthOfPods checks the health of the given pods of TidbCluster namespace/tcName with c, at most
// parallelism (DefaultParallelism when ≤ 0) at a time, so that N down TiDBs cost about one timeout
// instead of N (TiDB Operator v1 checks them one by one). It returns every pod's health — false for a
// pod whose check failed — and the errors of GetHealth joined (nil when none), so a caller may use the
// partial result. No retries.
func GetHealthOfPods(ctx context.Context, c Client, namespace, tcName string, pods []string, opts Options,
	parallelism int) (map[string]bool, error) {
	return podhttp.EachPod(ctx, pods, parallelism, func(ctx context.Context, pod string) (bool, error) {
		return c.GetHealth(ctx, namespace, tcName, pod, opts)
	})
}
