package app

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/gcbudget"
)

// memoryLimitShare is the part of the container's memory limit the Go
// runtime is asked to stay under (its soft limit, GOMEMLIMIT): the rest is
// room for what the runtime does not count and for a burst it cannot
// collect in time.
const memoryLimitShare = 0.9

// defaultGCBudget is --gc-budget's default: several times what the
// workers' syncs hold in flight, so that a small heap is collected as GOGC
// decides, and small enough that 1000 clusters fit in 150 MiB (144.6 MiB
// measured; 16Mi: 161.0 MiB for a third less idle CPU).
const defaultGCBudget = "8Mi"

// parseMemoryLimit reads --memory-limit: a quantity ("150Mi", or the
// bytes the downward API gives for limits.memory), "" for none. A
// negative or unparsable value is an error.
func parseMemoryLimit(s string) (int64, error) {
	return parseQuantity("--memory-limit", s)
}

// parseQuantity reads the memory quantity of flag (0 for ""); a negative
// or unparsable value is an error.
func parseQuantity(flag, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("%s %q is not a memory quantity (e.g. 512Mi)", flag, s)
	}
	return q.Value(), nil
}

// softMemoryLimit returns the soft limit for a container memory limit of
// limit bytes, or 0 (leave the runtime's own) when there is no limit or
// GOMEMLIMIT is set (getenv reads the environment).
func softMemoryLimit(limit int64, getenv func(string) string) int64 {
	if limit <= 0 || getenv("GOMEMLIMIT") != "" {
		return 0
	}
	return int64(float64(limit) * memoryLimitShare)
}

// applyMemoryLimit sets the Go soft memory limit from --memory-limit, so
// that the garbage collector works harder near the container's limit (the
// runtime does not read cgroup limits itself). It is soft: a live heap
// near it still grows past it (263 MiB measured under 256Mi at N=1000).
//
// It then starts the garbage budget (--gc-budget, package gcbudget) until
// ctx ends: after each collection the soft limit is set to the live heap
// plus the budget, never above the limit set here or by GOMEMLIMIT.
func (o *Options) applyMemoryLimit(ctx context.Context, logger klog.Logger) {
	limit, _ := parseMemoryLimit(o.MemoryLimit) // Validate reported any error
	if soft := softMemoryLimit(limit, os.Getenv); soft > 0 {
		debug.SetMemoryLimit(soft)
		logger.Info("Go soft memory limit set", "limit", limit, "soft", soft)
	}
	if budget, _ := parseQuantity("--gc-budget", o.GCBudget); budget > 0 {
		gcbudget.New(budget).Start(ctx)
		logger.Info("Go garbage budget set", "budget", budget)
	}
}

// sampleAllocations turns the runtime's sampling of allocations off unless
// --pprof serves the heap profile: nothing else reads the samples, and
// each one costs a stack unwinding and a record kept for the life of the
// process.
func sampleAllocations(pprof bool) {
	if !pprof {
		runtime.MemProfileRate = 0
	}
}
