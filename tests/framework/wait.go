package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// PollInterval is how often WaitFor evaluates its condition.
const PollInterval = 100 * time.Millisecond

type observationKey struct{}

type observation struct {
	mu   sync.Mutex
	last string
}

// Observef records what a WaitFor condition saw on this attempt (e.g. "2/3 pods ready"); WaitFor
// prints the last observation if it times out. Outside a WaitFor condition it does nothing.
func Observef(ctx context.Context, format string, args ...any) {
	if o, ok := ctx.Value(observationKey{}).(*observation); ok {
		o.mu.Lock()
		o.last = fmt.Sprintf(format, args...)
		o.mu.Unlock()
	}
}

// WaitFor polls cond every PollInterval, starting at once, until it returns true, an error, or timeout
// elapses. An error from cond fails the test at once (return false, nil for "not yet", e.g. on
// NotFound while waiting for a create). On timeout, or if ctx ends first, it fails the test with desc
// and the last observation recorded by Observef. cond gets a context bounded by the timeout.
func WaitFor(t testing.TB, ctx context.Context, timeout time.Duration, desc string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := Poll(ctx, timeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", desc, err)
	}
}

// Poll is WaitFor without a test: it returns nil once cond returns true, cond's error, or a timeout
// error that carries the last observation. Use it where a failure must not end the test.
func Poll(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	obs := &observation{}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, observationKey{}, obs), timeout)
	defer cancel()
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	start := time.Now()
	var lastErr error
	for {
		done, err := cond(ctx)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("condition failed after %s: %w", time.Since(start).Round(time.Millisecond), err)
		}
		if err != nil {
			lastErr = err // the timeout cut a request short; report it if nothing else was observed
		}
		if done && err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			obs.mu.Lock()
			last := obs.last
			obs.mu.Unlock()
			switch {
			case last == "" && lastErr != nil:
				last = lastErr.Error()
			case last == "":
				last = "nothing recorded (call framework.Observef in the condition)"
			}
			return fmt.Errorf("not done after %s (%w); last observation: %s", time.Since(start).Round(time.Millisecond), context.Cause(ctx), last)
		case <-ticker.C:
		}
	}
}
