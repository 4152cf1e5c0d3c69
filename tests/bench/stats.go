//go:build bench

package main

import (
	"math"
	"sort"
	"time"
)

// Durations summarises a sample of latencies, in seconds.
type Durations struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Seconds"`
	P99   float64 `json:"p99Seconds"`
	Max   float64 `json:"maxSeconds"`
}

// summarize returns the nearest-rank p50, p99 and max of ds; the zero value
// for an empty sample.
func summarize(ds []time.Duration) Durations {
	if len(ds) == 0 {
		return Durations{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return Durations{
		Count: len(s),
		P50:   seconds(percentile(s, 50)),
		P99:   seconds(percentile(s, 99)),
		Max:   seconds(s[len(s)-1]),
	}
}

// percentile is the nearest-rank percentile of a sorted, non-empty sample.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// seconds rounds d to milliseconds and returns it in seconds.
func seconds(d time.Duration) float64 {
	return math.Round(float64(d.Milliseconds())) / 1000
}

// ratio returns a/b rounded to two decimals, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round2(a / b)
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
