//go:build bench

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// MarshalJSON writes durations as Go duration strings ("5m0s").
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	return json.Marshal(struct {
		plain
		Idle            string `json:"idle"`
		Settle          string `json:"settle"`
		ConvergeTimeout string `json:"convergeTimeout"`
	}{plain(c), c.Idle.String(), c.Settle.String(), c.ConvergeTimeout.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	var v struct {
		plain
		Idle            string `json:"idle"`
		Settle          string `json:"settle"`
		ConvergeTimeout string `json:"convergeTimeout"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Config(v.plain)
	for _, d := range []struct {
		dst *time.Duration
		s   string
	}{{&c.Idle, v.Idle}, {&c.Settle, v.Settle}, {&c.ConvergeTimeout, v.ConvergeTimeout}} {
		if d.s == "" {
			continue
		}
		var err error
		if *d.dst, err = time.ParseDuration(d.s); err != nil {
			return err
		}
	}
	return nil
}

// target is one goal of issue #8, stated at N=50.
type target struct {
	name string
	goal string
	ok   func(*Round) bool
}

// v1MinimumGoal is issue 36's bound on requests per cluster ÷ v1's minimum.
const v1MinimumGoal = 1.1

// peakRSSGoalMiB is half of TiDB Operator v1.6's 151 MB (decimal) RSS.
const peakRSSGoalMiB = 151e6 / 2 / (1 << 20)

var targets = []target{
	{"all Ready ≤ ½ of v2's 89 s", "≤ 44.5 s", func(r *Round) bool { return r.Convergence.Ready == r.N && r.Convergence.TotalS <= 44.5 }},
	{"within 1.5× the raw API time", "≤ 1.5", func(r *Round) bool { return r.Raw != nil && r.RatioToRaw > 0 && r.RatioToRaw <= 1.5 }},
	{"requests per cluster ÷ v1's minimum", fmt.Sprintf("≤ %.1f", v1MinimumGoal), func(r *Round) bool {
		q := ratio(r.Requests.PerCluster, float64(v1MinimumOf(r).Total()))
		return q > 0 && q <= v1MinimumGoal
	}},
	{"409 conflicts", "0", func(r *Round) bool { return r.Requests.Conflicts == 0 }},
	{"idle writes to cluster objects", "0", func(r *Round) bool { return r.Steady.WindowSeconds > 0 && r.Steady.ClusterWrites == 0 }},
	{"idle uncached GETs", "0", func(r *Round) bool { return r.Steady.WindowSeconds > 0 && r.Steady.UncachedGets == 0 }},
	{"idle PD/TiKV/TiFlash/TiDB requests per cluster per minute", "≤ 4", func(r *Round) bool {
		return r.Steady.WindowSeconds > 0 && r.Steady.ExternalPerClusterMin <= 4
	}},
	{"peak RSS ≤ ½ of v1.6's 151 MB", fmt.Sprintf("≤ %.1f MiB", peakRSSGoalMiB), func(r *Round) bool {
		return r.Cost.PeakRSSMiB > 0 && r.Cost.PeakRSSMiB <= peakRSSGoalMiB
	}},
}

// renderTable prints one column per N, then the targets checked on the
// N=50 round (the reference's N) or, without one, on every round.
func renderTable(rep *Report) string {
	var b strings.Builder
	m := rep.Machine
	fmt.Fprintf(&b, "\nkubetidb scale bench — shape %s, one namespace per cluster, operator flags %q env %q\n",
		rep.Config.Shape, rep.Config.OperatorFlags, rep.Config.OperatorEnv)
	fmt.Fprintf(&b, "machine: %d cores, %d GiB, %s, %s; started %s\n\n", m.Cores, m.MemoryGiB, m.CPUModel, m.GoVersion,
		rep.StartedAt.Format("2006-01-02 15:04 UTC"))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "metric"
	for _, r := range rep.Rounds {
		head += "\t" + roundName(rep, r)
	}
	_, _ = fmt.Fprintln(w, head+"\tv1.6 / v2 (N=50)")
	var row rowFunc = func(name, ref string, f func(r *Round) string) {
		line := name
		for _, r := range rep.Rounds {
			line += "\t" + f(r)
		}
		_, _ = fmt.Fprintln(w, line+"\t"+ref)
	}
	row("Ready / created", "", func(r *Round) string { return fmt.Sprintf("%d/%d", r.Convergence.Ready, r.N) })
	row("pods per cluster (with discovery)", "", func(r *Round) string { return fmt.Sprint(pods(r)) })
	row("all Ready after create (s)", "203 / 89", func(r *Round) string { return f1(r.Convergence.TotalS) })
	row("per cluster p50 / p99 (s)", "", func(r *Round) string {
		return f1(r.Convergence.PerTC.P50) + " / " + f1(r.Convergence.PerTC.P99)
	})
	row("raw API: created / all Ready (s)", "", func(r *Round) string {
		if r.Raw == nil {
			return "-"
		}
		return f1(r.Raw.CreateSeconds) + " / " + f1(r.Raw.ReadySeconds)
	})
	row("operator ÷ raw", "", func(r *Round) string { return f2(r.RatioToRaw) })
	row("raw API in v1's order: created / all Ready (s)", "", func(r *Round) string {
		if r.RawGated == nil {
			return "-"
		}
		return f1(r.RawGated.CreateSeconds) + " / " + f1(r.RawGated.ReadySeconds)
	})
	row("operator ÷ raw in v1's order", "", func(r *Round) string { return f2(r.RatioToGated) })
	row("others' CPU meanwhile (cores)", "", func(r *Round) string {
		raw := "-"
		if r.Raw != nil {
			raw = f1(r.Raw.Load.OtherCores)
		}
		return f1(r.Convergence.Load.OtherCores) + " / " + raw + disturbed(r)
	})
	row("cores converging: apiserver/etcd/kcm", "", func(r *Round) string {
		p := r.Convergence.Load.ByProcess
		return f2(p["kube-apiserver"]) + "/" + f2(p["etcd"]) + "/" + f2(p["kube-controller-manager"])
	})
	row("  sched+kwok/simulator/operator/proxy", "", func(r *Round) string {
		p := r.Convergence.Load.ByProcess
		return f2(p["kube-scheduler"]+p["kwok"]) + "/" + f2(p["tidb-simulator"]) + "/" + f2(p["tidb-controller-manager"]) + "/" + f2(p["harness"])
	})
	row("API requests per cluster", "77 / 92", func(r *Round) string { return f1(r.Requests.PerCluster) })
	row("  of which until all Ready", "", func(r *Round) string { return f1(r.Requests.UntilReadyPerCluster) })
	row("  writes / Event writes / GETs", "", func(r *Round) string {
		q := r.Requests
		return f1(q.WritesPerCluster) + " / " + f1(q.EventsPerCluster) + " / " + f1(q.GetsPerCluster)
	})
	row("  ÷ v1's minimum (objects+meta patches+status)", "", func(r *Round) string {
		m := v1MinimumOf(r)
		return fmt.Sprintf("%s (%s)", f2(ratio(r.Requests.PerCluster, float64(m.Total()))), m)
	})
	row("409 conflicts", "1 / 191", func(r *Round) string { return fmt.Sprint(r.Requests.Conflicts) })
	row("operator's share of apiserver requests", "", func(r *Round) string {
		return fmt.Sprintf("%.0f%% of %d", 100*r.Convergence.OperatorShare, r.Convergence.APIServerRequests)
	})
	row("syncs (waits) per cluster", "", func(r *Round) string {
		return f1(r.Convergence.Syncs) + " (" + f1(r.Convergence.Waits) + ")"
	})
	row("PD/TiKV/TiFlash/TiDB req/cluster to Ready", "", func(r *Round) string {
		c := r.Convergence
		return fmt.Sprintf("%s (%s)", f1(c.ExternalPerCluster), externalSplit(c.ExternalByComponent))
	})
	row("  PD store-list reads per cluster; per sync", "", func(r *Round) string {
		reads := r.Convergence.ExternalByPath["pd "+pdStoresPath]
		return f1(reads) + "; " + f2(ratio(reads, r.Convergence.Syncs))
	})
	row("peak req/s; throttle logs; max queue", "", func(r *Round) string {
		c := r.Convergence
		return fmt.Sprintf("%d; %d; %.0f", c.PeakRPS, c.ThrottleLogs, c.MaxQLen)
	})
	row("idle writes to cluster objects", "", func(r *Round) string { return fmt.Sprint(r.Steady.ClusterWrites) })
	row("  per cluster per minute", "2 / 0", func(r *Round) string { return f2(r.Steady.WritesPerClusterMin) })
	row("idle Lease requests per minute", "", func(r *Round) string { return f1(r.Steady.LeasePerMinute) })
	row("idle uncached GETs", "16 / 0", func(r *Round) string { return fmt.Sprint(r.Steady.UncachedGets) })
	row("idle PD/TiKV/TiFlash/TiDB req/cluster/min", "20 / 6", func(r *Round) string {
		return fmt.Sprintf("%s (%s)", f1(r.Steady.ExternalPerClusterMin), externalSplit(r.Steady.ByComponentPerClusterMin))
	})
	row("reaction p50 / p99 (s)", "", func(r *Round) string { return f2(r.Reaction.P50) + " / " + f2(r.Reaction.P99) })
	row("CPU s: converge; idle per min", "", func(r *Round) string {
		return f1(r.Cost.CPUSecondsConverge) + "; " + f2(r.Steady.CPUSecondsPerMinute)
	})
	writeStoreRows(row)
	row("peak RSS (MiB)", "151 / 184 MB", func(r *Round) string { return f1(r.Cost.PeakRSSMiB) })
	row("cached objects (unfiltered informers)", "", func(r *Round) string {
		return fmt.Sprintf("%d (%d)", r.Cost.CacheTotal, len(r.Cost.UnfilteredInformers))
	})
	row("per pod (÷ pods per cluster)", "", func(*Round) string { return "" })
	for _, f := range perPodFigures {
		if f.whole {
			continue
		}
		row("  "+f.name, "", func(r *Round) string { return f.format(perPod(r, f)) })
	}
	_ = w.Flush()
	writeTargets(&b, rep)
	writeShapeComparison(&b, rep)
	return b.String()
}

// pdStoresPath is PD's store list, which TiKV and TiFlash read once per
// sync together.
const pdStoresPath = "/pd/api/v1/stores"

// externalSplit prints PD/TiKV/TiFlash/TiDB requests in that order.
func externalSplit(c map[string]float64) string {
	return f1(c["pd"]) + "/" + f1(c["tikv"]) + "/" + f1(c["tiflash"]) + "/" + f1(c["tidb"])
}

// roundName heads a round's column: N=10, or N=10 tiflash when the rounds
// have more than one shape.
func roundName(rep *Report, r *Round) string {
	for _, o := range rep.Rounds {
		if o.Shape != r.Shape {
			return fmt.Sprintf("N=%d %s", r.N, r.Shape)
		}
	}
	return fmt.Sprintf("N=%d", r.N)
}

// pods is the round's pods per cluster; results written before the field
// existed take it from the shape.
func pods(r *Round) int {
	if r.PodsPerCluster > 0 {
		return r.PodsPerCluster
	}
	if tc, _, err := loadShape(r.Shape); err == nil {
		return podsPerCluster(tc)
	}
	return 0
}

// v1MinimumOf is the round's v1 minimum; results written before the field
// existed take it from the shape (unscaled).
func v1MinimumOf(r *Round) V1Minimum {
	if r.Requests.V1Minimum.Objects > 0 {
		return r.Requests.V1Minimum
	}
	if tc, _, err := loadShape(r.Shape); err == nil {
		return v1Minimum(tc)
	}
	return V1Minimum{}
}

// perPodFigure is a per-cluster cost divided by the pods of one cluster,
// so that shapes of different sizes compare.
type perPodFigure struct {
	name   string
	value  func(r *Round) float64 // per cluster
	format func(float64) string
	// whole compares the figure per cluster, undivided: a cluster's pods
	// start in parallel, so dividing a time by them would flatter a bigger
	// shape.
	whole bool
}

// perPodFigures are the costs a shape is compared on (writeShapeComparison).
var perPodFigures = []perPodFigure{
	{"API requests", func(r *Round) float64 { return r.Requests.PerCluster }, f2, false},
	{"  writes (Events excluded)", func(r *Round) float64 { return r.Requests.WritesPerCluster }, f2, false},
	{"syncs to Ready", func(r *Round) float64 { return r.Convergence.Syncs }, f2, false},
	{"PD/TiKV/TiFlash/TiDB requests to Ready", func(r *Round) float64 { return r.Convergence.ExternalPerCluster }, f2, false},
	{"operator CPU converging (ms)", func(r *Round) float64 {
		return 1000 * r.Cost.CPUSecondsConverge / float64(r.N)
	}, f1, false},
	{"idle PD/TiKV/TiFlash/TiDB req/min", func(r *Round) float64 { return r.Steady.ExternalPerClusterMin }, f2, false},
	{"idle operator CPU (ms/min)", func(r *Round) float64 {
		return 1000 * r.Steady.CPUSecondsPerMinute / float64(r.N)
	}, f2, false},
	{"cached objects", func(r *Round) float64 { return float64(r.Cost.CacheTotal) / float64(r.N) }, f2, false},
	{"per cluster p50 to Ready (s, not ÷ pods)", func(r *Round) float64 { return r.Convergence.PerTC.P50 }, f2, true},
}

// perPod divides a per-cluster figure by the round's pods per cluster,
// unless the figure is compared whole.
func perPod(r *Round, f perPodFigure) float64 {
	if f.whole {
		return f.value(r)
	}
	if pods(r) == 0 {
		return 0
	}
	return f.value(r) / float64(pods(r))
}

// basicFor is the basic round without errors at N or, without one, at the
// N nearest to it (BENCH_N=1 BENCH_SHAPE=big against a basic round of a
// report merged from another run): per pod, N changes little.
func basicFor(rep *Report, n int) *Round {
	var best *Round
	for _, r := range rep.Rounds {
		if r.Shape != "basic" || r.Error != "" {
			continue
		}
		if best == nil || abs(r.N-n) < abs(best.N-n) {
			best = r
		}
	}
	return best
}

func abs(n int) int { return max(n, -n) }

// shapeGoal is issue #12's bound: another shape's per-pod cost within 10 %
// of the basic shape's.
const shapeGoal = 1.10

// writeShapeComparison divides each per-pod figure of a round of another
// shape by the same figure of the basic round at the same N (or the nearest), and checks
// it against shapeGoal. A figure where basic is 0 is left out.
func writeShapeComparison(b *strings.Builder, rep *Report) {
	var pairs [][2]*Round
	for _, r := range rep.Rounds {
		if base := basicFor(rep, r.N); base != nil && r.Shape != "basic" {
			pairs = append(pairs, [2]*Round{base, r})
		}
	}
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintf(b, "\nper pod against basic at the same N or the nearest (goal ≤ %.2f×)\n", shapeGoal)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	head := "figure per pod"
	for _, p := range pairs {
		head += fmt.Sprintf("\t%s ÷ basic (N=%d)", p[1].Shape, p[1].N)
		if p[0].N != p[1].N {
			head += fmt.Sprintf(" basic N=%d", p[0].N)
		}
	}
	_, _ = fmt.Fprintln(w, head)
	for _, f := range perPodFigures {
		line := strings.TrimSpace(f.name)
		for _, p := range pairs {
			base, other := perPod(p[0], f), perPod(p[1], f)
			switch q := ratio(other, base); {
			case base == 0:
				line += "\t-"
			case q <= shapeGoal:
				line += "\t" + f2(q) + " met"
			default:
				line += "\t" + f2(q) + " NOT met"
			}
		}
		_, _ = fmt.Fprintln(w, line)
	}
	_ = w.Flush()
}

func writeTargets(b *strings.Builder, rep *Report) {
	var checked []*Round
	for _, r := range rep.Rounds {
		if r.N == 50 {
			checked = append(checked, r)
		}
	}
	note := "at N=50"
	if len(checked) == 0 {
		checked, note = rep.Rounds, "indicative: the targets are stated at N=50"
	}
	fmt.Fprintf(b, "\ntargets (%s)\n", note)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	head := "target\tgoal"
	for _, r := range checked {
		head += "\t" + roundName(rep, r)
	}
	_, _ = fmt.Fprintln(w, head)
	for _, t := range targets {
		line := t.name + "\t" + t.goal
		for _, r := range checked {
			if t.ok(r) {
				line += "\tmet"
			} else {
				line += "\tNOT met"
			}
		}
		_, _ = fmt.Fprintln(w, line)
	}
	_ = w.Flush()
	for _, r := range rep.Rounds {
		if r.Error != "" {
			fmt.Fprintf(b, "%s errors: %s\n", roundName(rep, r), r.Error)
		}
	}
}

// disturbed flags a round whose timings were taken while other work used
// more than disturbedCores of the machine.
func disturbed(r *Round) string {
	if r.Convergence.Load.OtherCores > disturbedCores || (r.Raw != nil && r.Raw.Load.OtherCores > disturbedCores) {
		return " DISTURBED"
	}
	return ""
}

func f1(f float64) string { return fmt.Sprintf("%.1f", f) }
func f2(f float64) string { return fmt.Sprintf("%.2f", f) }
