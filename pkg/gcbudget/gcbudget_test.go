package gcbudget

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimitIsLivePlusOverheadPlusBudget(t *testing.T) {
	for _, c := range []struct {
		name            string
		m               Memory
		budget, ceiling int64
		want            int64
	}{
		{"no ceiling", Memory{Live: 80 << 20, Overhead: 10 << 20}, 32 << 20, math.MaxInt64, 122 << 20},
		{"under the ceiling", Memory{Live: 80 << 20, Overhead: 10 << 20}, 32 << 20, 200 << 20, 122 << 20},
		{"capped by the ceiling", Memory{Live: 180 << 20, Overhead: 10 << 20}, 32 << 20, 200 << 20, 200 << 20},
		{"empty heap", Memory{}, 32 << 20, math.MaxInt64, 32 << 20},
	} {
		if got := Limit(c.m, c.budget, c.ceiling); got != c.want {
			t.Errorf("%s: Limit = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestReadSeesTheLiveHeap(t *testing.T) {
	keep := make([]byte, 16<<20)
	runtime.GC()
	m := Read()
	runtime.KeepAlive(keep)
	if m.Live < 16<<20 {
		t.Errorf("live heap %d after keeping 16 MiB", m.Live)
	}
	if m.Overhead == 0 {
		t.Error("no overhead: the runtime always holds stacks and metadata")
	}
}

// restoreLimit puts the process's soft memory limit back after a test.
func restoreLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
}

type update struct {
	limit int64
	m     Memory
}

// record returns a hook that sends each update on a channel.
func record() (func(int64, Memory), <-chan update) {
	ch := make(chan update, 64)
	return func(l int64, m Memory) { ch <- update{l, m} }, ch
}

// nextLimit forces a collection and waits for the limit set after it
// (or after a later one), skipping those set after earlier collections.
// The cleanup that sets a limit re-arms itself asynchronously, so a
// collection forced just before it re-arms is not seen: it forces another
// every 10 ms until one is.
func nextLimit(t *testing.T, updates <-chan update) int64 {
	t.Helper()
	runtime.GC()
	done := Read().Cycles
	timeout := time.After(30 * time.Second)
	again := time.NewTicker(10 * time.Millisecond)
	defer again.Stop()
	for {
		select {
		case u := <-updates:
			if u.m.Cycles >= done {
				return u.limit
			}
		case <-again.C:
			runtime.GC()
		case <-timeout:
			t.Fatal("no limit set within 30 s of a collection")
			return 0
		}
	}
}

func TestBudgetSetsTheLimitAfterEachCollectionAndRestoresIt(t *testing.T) {
	restoreLimit(t)
	debug.SetMemoryLimit(math.MaxInt64)
	const budget = 8 << 20
	b := New(budget)
	var limits <-chan update
	b.updated, limits = record()
	ctx, cancel := context.WithCancel(context.Background())
	b.Start(ctx)

	keep := make([]byte, 32<<20)
	first := nextLimit(t, limits)
	if min := int64(32<<20 + budget); first < min {
		t.Errorf("limit %d below the live heap plus the budget (%d)", first, min)
	}
	if got := debug.SetMemoryLimit(-1); got < 32<<20+budget {
		t.Errorf("runtime limit %d, below the live heap plus the budget", got)
	}
	runtime.KeepAlive(keep)
	if second := nextLimit(t, limits); second > first-16<<20 {
		t.Errorf("limit %d did not follow the heap down from %d after 32 MiB were dropped", second, first)
	}

	cancel()
	<-ctx.Done()
	b.Stop() // idempotent; AfterFunc may not have run yet
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit after Stop = %d, want the one before Start", got)
	}
	b.afterGC() // a cleanup armed before Stop
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("a collection after Stop set the limit to %d", got)
	}
}

func TestBudgetNeverRaisesTheLimitItWasGiven(t *testing.T) {
	restoreLimit(t)
	runtime.GC()
	ceiling := int64(Read().Live + 4<<20 + 64<<20)
	debug.SetMemoryLimit(ceiling)
	b := New(1 << 30)
	var limits <-chan update
	b.updated, limits = record()
	b.Start(context.Background())
	defer b.Stop()
	if got := nextLimit(t, limits); got != ceiling {
		t.Errorf("limit %d, want the ceiling %d", got, ceiling)
	}
}

func TestZeroBudgetLeavesTheRuntimeAlone(t *testing.T) {
	restoreLimit(t)
	debug.SetMemoryLimit(math.MaxInt64)
	b := New(0)
	b.updated = func(int64, Memory) { t.Error("a zero budget set a limit") }
	b.Start(context.Background())
	b.Stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d, want it untouched", got)
	}
}
