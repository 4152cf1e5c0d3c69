package podhttp

import (
	"context"
	"errors"
	"sync"
)

// DefaultParallelism is how many pods EachPod asks at once when not told otherwise.
const DefaultParallelism = 8

// EachPod calls get for every pod, at most parallelism (DefaultParallelism when ≤ 0) at a time, so
// that N pods that do not answer cost about one timeout instead of N. It returns every pod's answer —
// what get returned, also with an error — and get's errors joined (nil when none), so a caller may use
// the partial result. No retries.
func EachPod[V any](ctx context.Context, pods []string, parallelism int,
	get func(ctx context.Context, pod string) (V, error)) (map[string]V, error) {
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	out := make(map[string]V, len(pods))
	slots := make(chan struct{}, parallelism)
	for _, pod := range pods {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			v, err := get(ctx, pod)
			mu.Lock()
			defer mu.Unlock()
			out[pod] = v
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
