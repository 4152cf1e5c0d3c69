//go:build bench

package main

import (
	"os"
	"testing"
)

func TestLoadBetween(t *testing.T) {
	t.Parallel()
	// Two cores for 10 s are 2000 jiffies: 1500 busy, of which 1000 ours.
	a := cpuMark{busy: 100, total: 1000, ours: 50, byName: map[string]uint64{"etcd": 10, "op": 40}}
	b := cpuMark{busy: 1600, total: 3000, ours: 1050, byName: map[string]uint64{"etcd": 610, "op": 440}}
	got := loadBetween(a, b, 2)
	if got.BusyCores != 1.5 || got.OtherCores != 0.5 || got.ByProcess["etcd"] != 0.6 || got.ByProcess["op"] != 0.4 {
		t.Errorf("loadBetween = %+v", got)
	}
}

func TestMarkCPUReadsThisProcess(t *testing.T) {
	t.Parallel()
	m, err := markCPU(map[string]int{"self": os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if m.total == 0 || m.busy > m.total {
		t.Errorf("implausible /proc/stat reading: %+v", m)
	}
	if _, ok := m.byName["self"]; !ok {
		t.Error("own process not read")
	}
	st, err := ReadProcStat(os.Getpid())
	if err != nil || st.PeakRSSBytes <= 0 || st.RSSBytes <= 0 {
		t.Errorf("ReadProcStat = %+v, %v", st, err)
	}
}
