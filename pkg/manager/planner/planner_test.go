package planner

import (
	"strings"
	"testing"
)

func pods(n int32, f func(o int32) Pod) map[int32]Pod {
	out := map[int32]Pod{}
	for o := int32(0); o < n; o++ {
		out[o] = f(o)
	}
	return out
}

func ready(updated bool) func(int32) Pod {
	return func(int32) Pod { return Pod{Exists: true, Ready: true, Healthy: true, Updated: updated} }
}

func TestPlan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		c    Component
		want Action
	}{
		{"converged", Component{Desired: 3, Replicas: 3, Partition: 3, Pods: pods(3, ready(true))},
			Action{Kind: Nothing, Replicas: 3, Partition: 3}},
		{"scale out all at once", Component{Desired: 5, Replicas: 3, Partition: 3, Pods: pods(3, ready(true))},
			Action{Kind: ScaleOut, Replicas: 5, Partition: 5}},
		{"scale out one step", Component{Desired: 5, Replicas: 3, Partition: 3, ScaleOutStep: 1, Pods: pods(3, ready(true))},
			Action{Kind: ScaleOut, Replicas: 4, Partition: 4}},
		{"scale in highest", Component{Desired: 3, Replicas: 5, Partition: 5, Pods: pods(5, ready(true))},
			Action{Kind: ScaleIn, Ordinal: 4, Replicas: 4, Partition: 4}},
		{"scale in two at once", Component{Desired: 2, Replicas: 5, Partition: 5, ScaleInStep: 2, Pods: pods(5, ready(true))},
			Action{Kind: ScaleIn, Ordinal: 3, Replicas: 3, Partition: 3}},
		{"scale in in parallel never goes below desired", Component{Desired: 4, Replicas: 5, Partition: 5, ScaleInStep: 3, Pods: pods(5, ready(true))},
			Action{Kind: ScaleIn, Ordinal: 4, Replicas: 4, Partition: 4}},
		{"a pod being removed may be down", Component{Desired: 2, Replicas: 4, Partition: 4, ScaleInStep: 2, Pods: pods(4, func(o int32) Pod {
			return Pod{Exists: true, Ready: o != 2, Healthy: true, Updated: true}
		})}, Action{Kind: ScaleIn, Ordinal: 2, Replicas: 2, Partition: 2}},
		{"scaling wins over upgrading", Component{Desired: 4, Replicas: 3, Partition: 3, Rolling: true, Pods: pods(3, ready(false))},
			Action{Kind: ScaleOut, Replicas: 4, Partition: 4}},
		{"scale in waits for a down pod", Component{Desired: 2, Replicas: 3, Partition: 3, Pods: pods(3, func(o int32) Pod {
			return Pod{Exists: true, Ready: o != 0, Healthy: true, Updated: true}
		})}, Action{Kind: Wait, Replicas: 3, Partition: 3}},
		{"rollout starts at the highest", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true, Pods: pods(3, ready(false))},
			Action{Kind: UpgradePod, Ordinal: 2, Replicas: 3, Partition: 2}},
		{"rollout continues below an upgraded healthy pod", Component{Desired: 3, Replicas: 3, Partition: 2, Rolling: true,
			Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: true, Healthy: true, Updated: o == 2} })},
			Action{Kind: UpgradePod, Ordinal: 1, Replicas: 3, Partition: 1}},
		{"rollout waits for the upgraded pod", Component{Desired: 3, Replicas: 3, Partition: 2, Rolling: true,
			Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: o != 2, Healthy: true, Updated: o == 2} })},
			Action{Kind: Wait, Replicas: 3, Partition: 2}},
		{"rollout waits while another pod is down", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true,
			Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: true, Healthy: o != 0} })},
			Action{Kind: Wait, Replicas: 3, Partition: 3}},
		{"a down pod itself may be restarted", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true,
			Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: true, Healthy: o != 2} })},
			Action{Kind: UpgradePod, Ordinal: 2, Replicas: 3, Partition: 2}},
		{"blocked by another component", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true, BlockedBy: "PD is upgrading",
			Pods: pods(3, ready(false))}, Action{Kind: Wait, Replicas: 3, Partition: 3}},
		{"force", Component{Desired: 1, Replicas: 1, Partition: 1, Rolling: true, Force: true, Pods: pods(1, ready(false))},
			Action{Kind: ForceUpgrade, Replicas: 1, Partition: 0}},
		{"force-upgrade: an old pod down restarts every pod", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true, ForceIfOldDown: true,
			Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: o != 0, Healthy: true} })},
			Action{Kind: ForceUpgrade, Replicas: 3, Partition: 0}},
		{"force-upgrade: a missing old pod restarts every pod", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true, ForceIfOldDown: true,
			Pods: pods(3, func(o int32) Pod { return Pod{Exists: o != 2, Ready: true, Healthy: true} })},
			Action{Kind: ForceUpgrade, Replicas: 3, Partition: 0}},
		{"force-upgrade: a Ready old pod whose member is unhealthy (a Down store) waits", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true,
			ForceIfOldDown: true, Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: true, Healthy: o != 0} })},
			Action{Kind: Wait, Replicas: 3, Partition: 3}},
		{"force-upgrade: a healthy rollout keeps its pace", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true, ForceIfOldDown: true,
			Pods: pods(3, ready(false))}, Action{Kind: UpgradePod, Ordinal: 2, Replicas: 3, Partition: 2}},
		{"force-upgrade: a restarted pod that is down still holds the rollout", Component{Desired: 3, Replicas: 3, Partition: 2, Rolling: true,
			ForceIfOldDown: true, Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: o != 2, Healthy: true, Updated: o == 2} })},
			Action{Kind: Wait, Replicas: 3, Partition: 2}},
		{"force-upgrade: another component's rollout still blocks", Component{Desired: 3, Replicas: 3, Partition: 3, Rolling: true, ForceIfOldDown: true,
			BlockedBy: "PD is upgrading", Pods: pods(3, func(o int32) Pod { return Pod{Exists: true, Ready: o != 0, Healthy: true} })},
			Action{Kind: Wait, Replicas: 3, Partition: 3}},
		{"rollout finished", Component{Desired: 3, Replicas: 3, Partition: 0, Rolling: true, Pods: pods(3, ready(true))},
			Action{Kind: Nothing, Replicas: 3, Partition: 3}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Plan(tt.c)
			got.Reason = ""
			if got != tt.want {
				t.Fatalf("Plan = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestScaleOutIsBoundedByReadyPods asks for 100000 pods: each action adds
// at most MaxUnreadyPods beyond the Ready ones, and none while that many
// are still not Ready.
func TestScaleOutIsBoundedByReadyPods(t *testing.T) {
	t.Parallel()
	c := Component{Desired: 100000, Replicas: 3, Partition: 3, Pods: map[int32]Pod{}}
	for o := int32(0); o < 3; o++ {
		c.Pods[o] = Pod{Exists: true, Ready: true, Updated: true, Healthy: true}
	}
	a := Plan(c)
	if a.Kind != ScaleOut || a.Replicas != 3+MaxUnreadyPods {
		t.Fatalf("first action %+v, want a scale-out to %d", a, 3+MaxUnreadyPods)
	}
	c.Replicas, c.Partition = a.Replicas, a.Partition
	for o := int32(3); o < c.Replicas; o++ {
		c.Pods[o] = Pod{Exists: true} // created, Pending
	}
	if a := Plan(c); a.Kind != Wait || !strings.Contains(a.Reason, "3 of 35 pods Ready") {
		t.Fatalf("with %d pods not Ready the scale-out must wait, got %+v", MaxUnreadyPods, a)
	}
	for o := int32(3); o < 13; o++ {
		c.Pods[o] = Pod{Exists: true, Ready: true, Updated: true, Healthy: true}
	}
	if a := Plan(c); a.Kind != ScaleOut || a.Replicas != 13+MaxUnreadyPods {
		t.Fatalf("10 more Ready pods allow 10 more, got %+v", a)
	}
}
