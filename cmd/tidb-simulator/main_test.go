package main

import (
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	f, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.opts.Timings != simulator.FastTimings() || f.opts.MaxReplicas != 3 || f.opts.RegionCount != 1000 || f.listen != "127.0.0.1:8379" {
		t.Errorf("defaults = %+v listen %s", f.opts, f.listen)
	}
	f, err = parseFlags([]string{"--realistic-timings", "--leader-drain-time=5s", "--ticdc-drain-time=7s", "--pump-offline-time=9s", "--ticdc-tables=30",
		"--max-replicas=5", "--listen-extra=127.0.0.2:2379, 127.0.0.3:2379"})
	if err != nil {
		t.Fatal(err)
	}
	want := simulator.RealisticTimings()
	want.LeaderDrainTime = 5 * time.Second
	want.TiCDCDrainTime = 7 * time.Second
	want.PumpOfflineTime = 9 * time.Second
	if f.opts.Timings != want || f.opts.MaxReplicas != 5 || f.opts.TiCDCTables != 30 || f.listenExtra == "" {
		t.Errorf("realistic with an override = %+v", f.opts)
	}
	for _, bad := range [][]string{{"--nope"}, {"extra"}, {"--tick=soon"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%v) accepted", bad)
		}
	}
}
