package planner

import (
	"fmt"
	"testing"
)

// BenchmarkPlan is one planner decision per sync of a component, for the
// states a sync meets most: converged (nothing to do), mid-rollout (walk
// every ordinal down to the one to restart) and scale-in (every other pod
// must be available), at a small and a large replica count.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int32{3, 100} {
		cases := []struct {
			name string
			c    Component
		}{
			{"converged", Component{Desired: n, Replicas: n, Partition: n, Pods: pods(n, ready(true))}},
			{"rollout", Component{Desired: n, Replicas: n, Partition: n, Rolling: true,
				Pods: pods(n, func(o int32) Pod { return Pod{Exists: true, Ready: true, Healthy: true, Updated: o >= n/2} })}},
			{"scale-in", Component{Desired: n - 1, Replicas: n, Partition: n, Pods: pods(n, ready(true))}},
		}
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if a := Plan(c.c); a.Kind == "" {
						b.Fatal("no action")
					}
				}
			})
		}
	}
}
