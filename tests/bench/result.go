//go:build bench

package main

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Report is the JSON written to _output/bench/<timestamp>.json.
type Report struct {
	StartedAt time.Time `json:"startedAt"`
	Machine   Machine   `json:"machine"`
	Config    Config    `json:"config"`
	Rounds    []*Round  `json:"rounds"`
}

// Machine describes where the figures were taken.
type Machine struct {
	Cores     int    `json:"cores"`
	MemoryGiB int64  `json:"memoryGiB"`
	CPUModel  string `json:"cpuModel"`
	GoVersion string `json:"goVersion"`
}

// Round is one run at one N on a fresh control plane.
type Round struct {
	N     int    `json:"n"`
	Shape string `json:"shape"`
	// PodsPerCluster is what one cluster of the shape runs, discovery
	// included: the divisor of the per-pod figures.
	PodsPerCluster int `json:"podsPerCluster"`
	// StoresPerCluster is the shape's TiKV and TiFlash stores, against
	// which a converged sync's cost is reported.
	StoresPerCluster int    `json:"storesPerCluster"`
	Namespaces       string `json:"namespaces"`
	Error            string `json:"error,omitempty"`
	// OperatorStartupSeconds is from process start to /readyz.
	OperatorStartupSeconds float64     `json:"operatorStartupSeconds"`
	Convergence            Convergence `json:"convergence"`
	Raw                    *RawResult  `json:"raw,omitempty"`
	// RatioToRaw is the operator's total convergence time ÷ the raw
	// client's create-to-Ready time.
	RatioToRaw float64 `json:"ratioToRaw"`
	// RawGated is the same replay in the TiDB Operator's order (PD, then
	// the stores, then TiDB and TiCDC, each gate one Ready pod), and
	// RatioToGated the operator's time ÷ its create-to-Ready time.
	RawGated     *RawResult `json:"rawGated,omitempty"`
	RatioToGated float64    `json:"ratioToGated"`
	Requests     Requests   `json:"requests"`
	Steady       Steady     `json:"steady"`
	Reaction     Durations  `json:"reaction"`
	Cost         Cost       `json:"cost"`

	machineCores int
}

// Convergence is create → Ready=True of every cluster.
type Convergence struct {
	Ready   int       `json:"ready"`
	PerTC   Durations `json:"perCluster"`
	TotalS  float64   `json:"totalSeconds"`
	Syncs   float64   `json:"syncsPerCluster"`
	Waits   float64   `json:"waitsPerCluster"`
	Errors  float64   `json:"errorsPerCluster"`
	MaxQLen float64   `json:"maxQueueDepth"`
	// ThrottleLogs counts the operator's "Waited before sending request"
	// lines: client-go logs a client-side throttle of more than 1s at most
	// every 10s at the default verbosity.
	ThrottleLogs int `json:"throttleLogLines"`
	// PeakRPS is the largest number of operator requests in one second;
	// near the client QPS (50 by default) means throttling.
	PeakRPS int `json:"peakRequestsPerSecond"`
	// Load is the machine's load from the first create until all Ready.
	Load Load `json:"load"`
	// APIServerRequests counts the requests kube-apiserver served meanwhile,
	// from every client; OperatorShare is the operator's part of them.
	APIServerRequests int     `json:"apiserverRequests"`
	OperatorShare     float64 `json:"operatorShare"`
	// ExternalPerCluster counts the operator's PD, TiKV, TiFlash and TiDB
	// requests (the counting proxy) from the first create until all Ready,
	// ÷ N; ExternalByComponent and ExternalByPath split it.
	ExternalPerCluster  float64            `json:"pdTikvTiflashTidbRequestsPerCluster"`
	ExternalByComponent map[string]float64 `json:"externalByComponentPerCluster,omitempty"`
	ExternalByPath      map[string]float64 `json:"externalByPathPerCluster,omitempty"`
}

// Requests counts the operator's API requests from the first create until
// it stops writing (see countConvergeRequests), from the apiserver's audit
// log; Lease requests are left out (Steady has them).
type Requests struct {
	PerCluster float64 `json:"perCluster"`
	// UntilReadyPerCluster counts only until the last cluster was Ready.
	UntilReadyPerCluster float64            `json:"untilReadyPerCluster"`
	WritesPerCluster     float64            `json:"writesPerCluster"`
	EventsPerCluster     float64            `json:"eventWritesPerCluster"`
	GetsPerCluster       float64            `json:"getsPerCluster"`
	ByVerbResource       map[string]float64 `json:"byVerbResourcePerCluster"`
	// V1Minimum is the fewest requests v1's object set needs (minimum.go):
	// objects created + meta-label patches + 1 status write.
	V1Minimum V1Minimum `json:"v1MinimumPerCluster"`
	// RatioToV1Minimum is PerCluster ÷ V1Minimum's total (goal ≤ 1.1).
	RatioToV1Minimum float64 `json:"ratioToV1Minimum"`
	Conflicts        int     `json:"conflicts409"`
}

// Steady is what the operator does while every cluster idles.
type Steady struct {
	SettleSeconds float64 `json:"settleSeconds"`
	WindowSeconds float64 `json:"windowSeconds"`
	// ClusterWrites are writes to objects in the clusters' namespaces
	// (TidbClusters and their status, children, Events).
	ClusterWrites         int            `json:"clusterWrites"`
	ClusterWritesByVerb   map[string]int `json:"clusterWritesByVerbResource,omitempty"`
	WritesPerClusterMin   float64        `json:"writesPerClusterPerMinute"`
	LeasePerMinute        float64        `json:"leaseRequestsPerMinute"`
	LeaseByVerb           map[string]int `json:"leaseRequestsByVerb,omitempty"`
	UncachedGets          int            `json:"uncachedGets"`
	UncachedGetsByRes     map[string]int `json:"uncachedGetsByResource,omitempty"`
	OtherRequests         map[string]int `json:"otherRequests,omitempty"`
	ExternalPerClusterMin float64        `json:"pdTikvTidbRequestsPerClusterPerMinute"`
	// ByComponentPerClusterMin splits the figure above into pd, tikv,
	// tiflash, tidb.
	ByComponentPerClusterMin map[string]float64 `json:"byComponentPerClusterPerMinute"`
	ByPathPerClusterMin      map[string]float64 `json:"byPathPerClusterPerMinute"`
	CPUSecondsPerMinute      float64            `json:"operatorCPUSecondsPerMinute"`
	// SyncsPerClusterMin counts the TidbCluster syncs of the idle window
	// (resyncs of converged clusters), and CPUMsPerSync divides the
	// operator's CPU of the window by them: a converged sync's cost.
	SyncsPerClusterMin float64 `json:"syncsPerClusterPerMinute"`
	CPUMsPerSync       float64 `json:"operatorCPUMsPerSync"`
}

// Cost is the controller-manager's own cost.
type Cost struct {
	CPUSecondsStartup  float64        `json:"cpuSecondsStartup"`
	CPUSecondsConverge float64        `json:"cpuSecondsConverge"`
	CPUSecondsTotal    float64        `json:"cpuSecondsTotal"`
	PeakRSSMiB         float64        `json:"peakRSSMiB"`
	RSSMiB             float64        `json:"rssMiB"`
	HeapInuseMiB       float64        `json:"heapInuseMiB"`
	CacheObjects       map[string]int `json:"cacheObjects"`
	CacheTotal         int            `json:"cacheObjectsTotal"`
	Informers          []Informer     `json:"informers"`
	// UnfilteredInformers lists informers of built-in kinds that list or
	// watch without a label selector, i.e. cache every object of the kind in
	// the cluster (the operator's own custom resources are not counted).
	UnfilteredInformers []string `json:"unfilteredInformers"`
}

func mib(b int64) float64 { return round2(float64(b) / (1 << 20)) }

// readMachine reads the core count, memory and CPU model.
func readMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				m.MemoryGiB = (kb + 512*1024) / (1024 * 1024)
			}
		}
		_ = f.Close()
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// perCluster divides each count by n, rounded to two decimals.
func perCluster(c map[string]int, n int) map[string]float64 {
	out := make(map[string]float64, len(c))
	for k, v := range c {
		out[k] = round2(float64(v) / float64(n))
	}
	return out
}
