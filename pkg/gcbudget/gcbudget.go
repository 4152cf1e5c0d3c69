// Package gcbudget gives the Go garbage collector a fixed budget of
// garbage above the live heap, instead of the runtime's default of as much
// again as is live (GOGC=100).
//
// The controller-manager's live heap is mostly its informer caches: long
// lived, and large with many clusters (about 80 MB at 1000). What its
// syncs allocate and drop is the same few megabytes in flight whatever the
// number of clusters. Under GOGC=100 the heap grows to twice the caches
// before a collection; with a budget it grows to the caches plus the
// budget. The budget is set as the Go soft memory limit (debug.
// SetMemoryLimit) after every collection: the live heap it found, plus
// what the runtime holds besides the heap, plus the budget. GOGC still
// applies, so a small heap (live below the budget) is collected exactly as
// before; only a large one is collected sooner. The runtime's own limiter
// caps the collector at half the CPU, and a limit that follows the live
// heap never sits below it, so the collector cannot spiral.
package gcbudget

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The runtime metrics the limit is computed from (runtime/metrics).
const (
	gcCycles     = "/gc/cycles/total:gc-cycles"
	liveHeap     = "/gc/heap/live:bytes"
	totalMapped  = "/memory/classes/total:bytes"
	heapObjects  = "/memory/classes/heap/objects:bytes"
	heapFree     = "/memory/classes/heap/free:bytes"
	heapReleased = "/memory/classes/heap/released:bytes"
)

// Memory is what the runtime reported after a collection.
type Memory struct {
	// Cycles counts the collections completed so far.
	Cycles uint64
	// Live is the heap the last collection marked live.
	Live uint64
	// Overhead is what the runtime holds besides heap objects and free
	// heap pages (stacks, fragmentation, GC and scheduler metadata); the
	// soft limit counts it.
	Overhead uint64
}

// Limit returns the soft memory limit that lets the heap grow by budget
// bytes of garbage above m, capped at ceiling (the limit the process was
// given, math.MaxInt64 for none).
func Limit(m Memory, budget, ceiling int64) int64 {
	want := saturated(m.Live) + max(budget, 0)
	if o := saturated(m.Overhead); want < math.MaxInt64-o {
		want += o
	} else {
		want = math.MaxInt64
	}
	return min(want, ceiling)
}

// saturated is u as an int64, math.MaxInt64 when it does not fit.
func saturated(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

// Read returns the runtime's figures as of its last collection.
func Read() Memory {
	s := []metrics.Sample{{Name: gcCycles}, {Name: liveHeap}, {Name: totalMapped}, {Name: heapObjects},
		{Name: heapFree}, {Name: heapReleased}}
	metrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	m := Memory{Cycles: v(0), Live: v(1)}
	if held := v(3) + v(4) + v(5); v(2) > held {
		m.Overhead = v(2) - held
	}
	return m
}

// Budget keeps the soft memory limit at the live heap plus a budget of
// garbage, re-set after each collection. Start it once; Stop ends it.
type Budget struct {
	budget  int64
	ceiling int64
	set     func(int64) int64
	// updated, if set, is called with each limit set and what it was
	// computed from (tests).
	updated func(int64, Memory)

	mu      sync.Mutex
	stopped bool
}

// New returns a Budget of budget bytes of garbage. The limit it sets
// never exceeds the soft limit in force when it starts (GOMEMLIMIT, or
// what --memory-limit set), which it reads then; a budget of 0 or less
// makes Start do nothing.
func New(budget int64) *Budget {
	return &Budget{budget: budget, set: debug.SetMemoryLimit}
}

// Start begins re-setting the limit after each collection, until ctx ends
// or Stop is called; it returns at once. The first limit is set after the
// first collection that follows.
func (b *Budget) Start(ctx context.Context) {
	if b.budget <= 0 {
		return
	}
	b.ceiling = b.set(-1)
	if b.ceiling <= 0 {
		b.ceiling = math.MaxInt64
	}
	context.AfterFunc(ctx, b.Stop)
	b.arm()
}

// Stop ends the re-setting and gives the runtime back the limit it had
// before Start.
func (b *Budget) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped && b.ceiling != 0 {
		b.set(b.ceiling)
	}
	b.stopped = true
}

// sentinel is allocated to be collected: its cleanup runs once the
// collection that found it unreachable is done. It is larger than the
// runtime's tiny objects, whose cleanups may never run.
type sentinel struct{ _ [32]byte }

// arm registers the work to do after the next collection.
func (b *Budget) arm() {
	runtime.AddCleanup(new(sentinel), (*Budget).afterGC, b)
}

func (b *Budget) afterGC() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	m := Read()
	limit := Limit(m, b.budget, b.ceiling)
	b.set(limit)
	if b.updated != nil {
		b.updated(limit, m)
	}
	b.arm()
}
