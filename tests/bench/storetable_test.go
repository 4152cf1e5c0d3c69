//go:build bench

package main

import (
	"strings"
	"testing"
)

// TestRenderTableBig checks the v1-minimum ratio, the per-store rows and
// that a big round is compared with the basic round of the nearest N.
func TestRenderTableBig(t *testing.T) {
	basic := &Round{N: 2, Shape: "basic", PodsPerCluster: 4, StoresPerCluster: 1,
		Requests: Requests{PerCluster: 25.3, V1Minimum: V1Minimum{Objects: 16, MetaPatches: 6, StatusWrites: 1}}}
	big := &Round{N: 1, Shape: "big", PodsPerCluster: 46, StoresPerCluster: 16,
		Requests: Requests{PerCluster: 130, V1Minimum: V1Minimum{Objects: 22, MetaPatches: 93, StatusWrites: 1}},
		Steady:   Steady{CPUSecondsPerMinute: 0.32, SyncsPerClusterMin: 2, CPUMsPerSync: 160, ByComponentPerClusterMin: map[string]float64{"pd": 2, "tidb": 6.4}}}
	out := renderTable(&Report{Rounds: []*Round{basic, big}})
	for _, want := range []string{
		"1.10 (23 = 16+6+1)", // 25.3 ÷ 23
		"1.12 (116 = 22+93+1)",
		"2.00; 160.00", // syncs per cluster-minute; CPU per sync
		"320.0; 8.40",  // idle CPU ms and PD+TiDB per cluster-minute
		"20.00; 0.53",  // ÷ 16 stores
		"big ÷ basic (N=1) basic N=2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if basicFor(&Report{Rounds: []*Round{big}}, 1) != nil {
		t.Error("basicFor found a basic round in a report without one")
	}
}
