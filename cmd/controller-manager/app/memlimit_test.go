package app

import (
	"runtime"
	"testing"
)

func TestSoftMemoryLimit(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	for _, c := range []struct {
		flag string
		env  func(string) string
		want int64
	}{
		{"", none, 0},
		{"150Mi", none, 150 << 20 * 9 / 10},
		{"536870912", none, 536870912 * 9 / 10}, // the downward API's bytes
		{"150Mi", func(k string) string { return map[string]string{"GOMEMLIMIT": "100MiB"}[k] }, 0},
	} {
		limit, err := parseMemoryLimit(c.flag)
		if err != nil {
			t.Fatalf("%q: %v", c.flag, err)
		}
		if got := softMemoryLimit(limit, c.env); got != c.want {
			t.Errorf("--memory-limit=%q: soft limit %d, want %d", c.flag, got, c.want)
		}
	}
	for _, bad := range []string{"lots", "-1Gi"} {
		o := NewOptions()
		o.MemoryLimit = bad
		if err := o.Validate(); err == nil {
			t.Errorf("--memory-limit=%q accepted", bad)
		}
	}
}

func TestGCBudgetFlag(t *testing.T) {
	t.Parallel()
	if o := NewOptions(); o.GCBudget != "8Mi" || o.Validate() != nil {
		t.Errorf("default --gc-budget %q (valid: %v), want 8Mi", o.GCBudget, o.Validate())
	}
	for _, ok := range []string{"0", "64Mi", "16777216"} {
		o := NewOptions()
		o.GCBudget = ok
		if err := o.Validate(); err != nil {
			t.Errorf("--gc-budget=%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"lots", "-1Mi"} {
		o := NewOptions()
		o.GCBudget = bad
		if err := o.Validate(); err == nil {
			t.Errorf("--gc-budget=%q accepted", bad)
		}
	}
}

// TestAllocationsAreSampledOnlyForPprof: without --pprof nothing reads the
// heap profile, so the runtime stops sampling allocations for it.
func TestAllocationsAreSampledOnlyForPprof(t *testing.T) {
	rate := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = rate })
	runtime.MemProfileRate = 4096
	sampleAllocations(true)
	if runtime.MemProfileRate != 4096 {
		t.Errorf("with --pprof the sampling rate became %d, want it left at 4096", runtime.MemProfileRate)
	}
	sampleAllocations(false)
	if runtime.MemProfileRate != 0 {
		t.Errorf("without --pprof the sampling rate is %d, want 0 (off)", runtime.MemProfileRate)
	}
}
