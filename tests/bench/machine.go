//go:build bench

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Load says how busy the machine was over a phase, in cores, and how much
// of that was not the bench's own processes: the CPU is shared with other
// work, and a phase measured while others used a core or more is disturbed
// and should be repeated.
type Load struct {
	BusyCores  float64 `json:"busyCores"`
	OtherCores float64 `json:"otherCores"`
	// ByProcess splits the bench's own share: kube-apiserver, etcd, …,
	// tidb-simulator, tidb-controller-manager, and the harness (which runs
	// the counting proxy).
	ByProcess map[string]float64 `json:"byProcess,omitempty"`
}

// disturbedCores is the foreign load above which a timing is flagged.
const disturbedCores = 0.5

// cpuMark is a reading of the machine's and the bench processes' CPU time.
type cpuMark struct {
	busy, total uint64            // jiffies of all CPUs: not idle, all
	ours        uint64            // jiffies of the bench's processes
	byName      map[string]uint64 // the same per process
}

// markCPU reads /proc/stat and the CPU time of the named pids.
func markCPU(pids map[string]int) (cpuMark, error) {
	m := cpuMark{byName: map[string]uint64{}}
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return m, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return m, fmt.Errorf("unexpected /proc/stat: %q", line)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return m, fmt.Errorf("parse /proc/stat: %w", err)
		}
		if i >= 8 { // guest time is already counted in user
			break
		}
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	for name, pid := range pids {
		if st, err := ReadProcStat(pid); err == nil {
			j := uint64(st.CPUSeconds*clockTicks + 0.5)
			m.ours += j
			m.byName[name] = j
		}
	}
	return m, nil
}

// loadBetween converts two marks into cores used, overall and by others.
func loadBetween(a, b cpuMark, cores int) Load {
	dt := float64(b.total - a.total)
	if dt <= 0 {
		return Load{}
	}
	// total counts every CPU: a second of wall time is cores × USER_HZ jiffies.
	wall := dt / float64(cores)
	busy := float64(b.busy-a.busy) / wall
	ours := float64(b.ours-a.ours) / wall
	l := Load{BusyCores: round2(busy), OtherCores: round2(max(busy-ours, 0)), ByProcess: map[string]float64{}}
	for name, j := range b.byName {
		if j0, ok := a.byName[name]; ok && j >= j0 {
			l.ByProcess[name] = round2(float64(j-j0) / wall)
		}
	}
	return l
}

// controlPlanePIDs reads the PIDs hack/local-cluster.sh recorded, by
// component, into pids.
func controlPlanePIDs(stateDir string, pids map[string]int) {
	files, _ := filepath.Glob(filepath.Join(stateDir, "pids", "*.pid"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(raw), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
}
