// Package planner decides, from what was observed, the one next lifecycle
// action of a component: scale out, scale in, restart one pod on a new
// revision, or wait. It is pure — no clients, listers, clocks or HTTP —
// so every decision can be simulated step by step with invariants checked
// after each step (planner_sim_test.go).
//
// Precedence, stated once:
//   - Scaling wins over upgrading, because a rollout restarts pods one by
//     one expecting a fixed membership; adding or removing members while
//     restarting could leave two members of a quorum down at once. New
//     pods start on the new revision anyway.
//   - Scale-in removes the highest ordinals, ScaleInStep of them per
//     action (one unless scalePolicy.scaleInParallelism says more), so each
//     removal can be prepared (PD member deleted, TiKV store Tombstone);
//     the pods that stay must all be available.
//   - A rollout restarts one pod at a time from the highest ordinal down
//     and only while every other pod is Ready and healthy, so at most one
//     member is ever unavailable because of the operator.
//   - Force (TC annotation tidb.pingcap.com/force-upgrade) never waits
//     for a pod still on the old revision: a rollout held by such a pod
//     becomes a ForceUpgrade, because the old revision is what keeps it
//     down and only the new one can fix it. A restarted pod that is
//     unavailable still holds the rollout, because forcing more pods onto
//     a revision that has not come up could take them all down.
//   - Cross-component order PD → TiKV → TiDB: a component does not start
//     restarting pods while a component it depends on is scaling or
//     upgrading (the caller passes that as Component.BlockedBy).
package planner

import "fmt"

// Kind is the kind of an action.
type Kind string

// Action kinds.
const (
	// Nothing: the component is where it should be.
	Nothing Kind = "Nothing"
	// Wait: something must happen first; Reason says what.
	Wait Kind = "Wait"
	// ScaleOut: raise replicas to Replicas (new highest ordinals).
	ScaleOut Kind = "ScaleOut"
	// ScaleIn: remove the pods Ordinal up to the highest, leaving Replicas
	// (= Ordinal).
	ScaleIn Kind = "ScaleIn"
	// UpgradePod: restart pod Ordinal on the new revision (partition = Ordinal).
	UpgradePod Kind = "UpgradePod"
	// ForceUpgrade: restart every pod at once (partition 0), for a component
	// that cannot come up on its current revision.
	ForceUpgrade Kind = "ForceUpgrade"
)

// Pod is what was observed of one ordinal.
type Pod struct {
	// Exists is false when the StatefulSet has not created the pod (yet).
	Exists bool
	// Ready is the pod's Ready condition.
	Ready bool
	// Updated is true when the pod runs the StatefulSet's update revision.
	Updated bool
	// Healthy is the component's own view: a healthy PD member, an Up
	// TiKV store, a TiDB answering /status.
	Healthy bool
}

// Available reports whether the pod serves: it exists, is Ready and healthy.
func (p Pod) Available() bool { return p.Exists && p.Ready && p.Healthy }

// Component is what was observed of one component.
type Component struct {
	// Desired is the wanted number of pods (spec replicas plus failover extras).
	Desired int32
	// Replicas is the StatefulSet's spec.replicas now.
	Replicas int32
	// Partition is the StatefulSet's RollingUpdate partition now.
	Partition int32
	// Rolling is true while pods run an old revision (the template changed).
	Rolling bool
	// Pods by ordinal, for ordinals 0..Replicas-1.
	Pods map[int32]Pod
	// ScaleOutStep bounds how many pods one ScaleOut adds (PD joins one at a
	// time); 0 means all at once.
	ScaleOutStep int32
	// ScaleInStep bounds how many pods one ScaleIn removes (TiKV, TiFlash and
	// TiDB's scaleInParallelism); 0 or 1 means one.
	ScaleInStep int32
	// Force restarts every pod at once (PD that cannot start on its config).
	Force bool
	// ForceIfOldDown turns a rollout that would wait for a pod still on the
	// old revision that is down (missing or not Ready) into a ForceUpgrade
	// (the TC annotation tidb.pingcap.com/force-upgrade: "true"). Waits for
	// restarted pods and for BlockedBy still hold.
	ForceIfOldDown bool
	// BlockedBy, when not empty, says why pods may not restart now (a
	// component this one depends on is scaling or upgrading).
	BlockedBy string
}

// Action is the one next step.
type Action struct {
	Kind Kind
	// Ordinal is the pod restarted (UpgradePod) or the lowest pod removed
	// (ScaleIn: it and every higher ordinal go).
	Ordinal int32
	// Replicas is spec.replicas after the action.
	Replicas int32
	// Partition is the RollingUpdate partition after the action.
	Partition int32
	// Reason says why, for logs, events and conditions.
	Reason string
}

// Plan returns the next action for c. It never returns an action that
// removes or restarts a pod while another pod of c is unavailable, except
// a forced upgrade.
func Plan(c Component) Action {
	keep := Action{Replicas: c.Replicas, Partition: c.Partition}
	switch {
	case c.Desired > c.Replicas:
		return planScaleOut(c, keep)
	case c.Desired < c.Replicas:
		return planScaleIn(c, keep)
	case !c.Rolling:
		return Action{Kind: Nothing, Replicas: c.Replicas, Partition: c.Replicas}
	case c.Force:
		return Action{Kind: ForceUpgrade, Replicas: c.Replicas, Partition: 0, Reason: "force upgrade: restarting every pod"}
	case c.BlockedBy != "":
		return wait(keep, "upgrade waits: %s", c.BlockedBy)
	}
	return planRollout(c, keep)
}

// MaxUnreadyPods bounds a scale-out: it never asks for pods beyond this
// many more than are Ready, so a mistyped replicas count (100000) becomes a
// steady trickle the API server and scheduler can take instead of a flood
// of pods and PVCs, and stops where pods stop becoming Ready.
const MaxUnreadyPods = 32

func planScaleOut(c Component, keep Action) Action {
	n := c.Desired
	if c.ScaleOutStep > 0 && c.Replicas+c.ScaleOutStep < n {
		n = c.Replicas + c.ScaleOutStep
	}
	ready := int32(0)
	for o := int32(0); o < c.Replicas; o++ {
		if p := c.Pods[o]; p.Exists && p.Ready {
			ready++
		}
	}
	if limit := ready + MaxUnreadyPods; n > limit {
		n = limit
	}
	if n <= c.Replicas {
		return wait(keep, "scale-out to %d waits: %d of %d pods Ready, and at most %d more are asked for at once",
			c.Desired, ready, c.Replicas, MaxUnreadyPods)
	}
	return Action{Kind: ScaleOut, Replicas: n, Partition: n,
		Reason: fmt.Sprintf("scaling out from %d to %d", c.Replicas, n)}
}

func planScaleIn(c Component, keep Action) Action {
	n := min(max(c.ScaleInStep, 1), c.Replicas-c.Desired)
	first := c.Replicas - n
	for o := int32(0); o < first; o++ {
		if p := c.Pods[o]; !p.Available() {
			return wait(keep, "scale-in waits until pod ordinal %d is available", o)
		}
	}
	return Action{Kind: ScaleIn, Ordinal: first, Replicas: first, Partition: min(c.Partition, first),
		Reason: fmt.Sprintf("scaling in from %d to %d", c.Replicas, first)}
}

// planRollout walks ordinals from the highest down: updated pods must be
// available; the first pod not updated is restarted, unless another pod is
// unavailable or the StatefulSet is already restarting it.
func planRollout(c Component, keep Action) Action {
	for o := c.Replicas - 1; o >= 0; o-- {
		p, ok := c.Pods[o]
		if !ok || !p.Exists {
			// below the partition a missing pod comes back on the old revision
			return waitOrForce(c, keep, o < c.Partition, "pod ordinal %d does not exist yet", o)
		}
		if p.Updated {
			if !p.Available() {
				return wait(keep, "upgraded pod ordinal %d is not Ready and healthy yet", o)
			}
			continue
		}
		if o >= c.Partition {
			return wait(keep, "pod ordinal %d is being restarted", o)
		}
		for other := int32(0); other < o; other++ {
			if q := c.Pods[other]; !q.Available() {
				// Only a pod that is down (missing or not Ready) lets force
				// act: a Ready pod whose member is unhealthy (a Down TiKV
				// store) is no broken template, and restarting the others
				// without eviction would take more replicas away.
				return waitOrForce(c, keep, !q.Updated && (!q.Exists || !q.Ready),
					"pod ordinal %d must be available before ordinal %d restarts", other, o)
			}
		}
		return Action{Kind: UpgradePod, Ordinal: o, Replicas: c.Replicas, Partition: o,
			Reason: fmt.Sprintf("restarting pod ordinal %d on the new revision", o)}
	}
	return Action{Kind: Nothing, Replicas: c.Replicas, Partition: c.Replicas, Reason: "every pod runs the new revision"}
}

// waitOrForce waits for the reason given, unless the wait is for a pod on
// the old revision (oldPod) and c.ForceIfOldDown: then every pod restarts.
func waitOrForce(c Component, keep Action, oldPod bool, format string, args ...any) Action {
	why := fmt.Sprintf(format, args...)
	if oldPod && c.ForceIfOldDown {
		return Action{Kind: ForceUpgrade, Replicas: c.Replicas, Partition: 0,
			Reason: "force upgrade: restarting every pod, as waiting cannot help (" + why + ")"}
	}
	return wait(keep, "%s", why)
}

func wait(keep Action, format string, args ...any) Action {
	keep.Kind = Wait
	keep.Reason = fmt.Sprintf(format, args...)
	return keep
}
