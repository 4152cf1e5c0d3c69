package podhttp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestEachPodBoundsParallelismAndKeepsPartialAnswers(t *testing.T) {
	t.Parallel()
	var running, most atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	pods := []string{"a", "b", "c", "d", "e"}
	done := make(chan struct{})
	var out map[string]int
	var err error
	go func() {
		defer close(done)
		out, err = EachPod(context.Background(), pods, 2, func(_ context.Context, pod string) (int, error) {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			if n == 2 || pod == "e" {
				once.Do(func() { close(release) }) // the second concurrent call (or the last pod) lets all go
			}
			<-release
			running.Add(-1)
			if pod == "c" {
				return 7, errors.New("c refused")
			}
			return len(pod), nil
		})
	}()
	<-done
	if most.Load() > 2 {
		t.Errorf("%d calls ran at once, want at most 2", most.Load())
	}
	if len(out) != 5 || out["a"] != 1 || out["c"] != 7 {
		t.Errorf("answers %v, want every pod's, the failed one's too", out)
	}
	if err == nil || err.Error() != "c refused" {
		t.Errorf("error %v, want c's", err)
	}
}
