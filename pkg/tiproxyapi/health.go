package tiproxyapi

import (
	"context"
	"errors"
	"sync"
)

// DefaultParallelism is how many TiProxy pods GetHealthOfPods checks at once when not told otherwise.
const DefaultParallelism = 8

// GetHealthOfPods checks the health of the given pods of TidbCluster namespace/tcName with c, at most
// parallelism (DefaultParallelism when ≤ 0) at a time, so that N down proxies cost about one timeout
// instead of N. It returns every pod's health — unhealthy, with the error as reason, for a pod whose
// check failed — and the errors of GetHealth joined (nil when none), so a caller may use the partial
// result. No retries.
func GetHealthOfPods(ctx context.Context, c Client, namespace, tcName string, pods []string, opts Options,
	parallelism int) (map[string]Health, error) {
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	out := make(map[string]Health, len(pods))
	slots := make(chan struct{}, parallelism)
	for _, pod := range pods {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			h, err := c.GetHealth(ctx, namespace, tcName, pod, opts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				h = Health{Reason: err.Error()}
				errs = append(errs, err)
			}
			out[pod] = h
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
