package planner

import (
	"fmt"
	"math/rand"
	"testing"
)

// world models one component's StatefulSet and pods closely enough to check
// the planner's decisions: pods at or above the partition run the update
// revision, a restarted or new pod needs a step to become available, the
// StatefulSet controller adds and removes the highest ordinals.
type world struct {
	rev, currentRev int // the update revision and the revision pods below the partition keep
	replicas, part  int32
	desired         int32
	scaleInStep     int32
	pods            map[int32]*simPod
}

type simPod struct {
	rev      int
	starting int  // steps until Ready after a (re)start
	crashed  int  // steps the pod stays unavailable after a crash
	healthy  bool // the component's own health, false while starting
}

func newWorld(n int32) *world {
	w := &world{rev: 1, currentRev: 1, replicas: n, part: n, desired: n, pods: map[int32]*simPod{}}
	for o := int32(0); o < n; o++ {
		w.pods[o] = &simPod{rev: 1, healthy: true}
	}
	return w
}

func (w *world) observe() Component {
	c := Component{Desired: w.desired, Replicas: w.replicas, Partition: w.part, Pods: map[int32]Pod{}, ScaleOutStep: 1, ScaleInStep: w.scaleInStep}
	for o := int32(0); o < w.replicas; o++ {
		p, ok := w.pods[o]
		if !ok {
			c.Pods[o] = Pod{}
			continue
		}
		c.Rolling = c.Rolling || p.rev != w.rev
		c.Pods[o] = Pod{Exists: true, Ready: p.starting == 0 && p.crashed == 0, Healthy: p.healthy && p.crashed == 0, Updated: p.rev == w.rev}
	}
	return c
}

// controller is the StatefulSet controller: create missing pods, delete
// surplus ones, restart one pod at or above the partition on an old revision.
func (w *world) controller() {
	for o := range w.pods {
		if o >= w.replicas {
			delete(w.pods, o)
		}
	}
	for o := int32(0); o < w.replicas; o++ {
		if _, ok := w.pods[o]; !ok {
			rev := w.currentRev
			if o >= w.part {
				rev = w.rev
			}
			w.pods[o] = &simPod{rev: rev, starting: 1}
		}
	}
	for o := w.replicas - 1; o >= w.part; o-- {
		if p := w.pods[o]; p.rev != w.rev {
			*p = simPod{rev: w.rev, starting: 1}
			break
		}
	}
	allNew := true
	for _, p := range w.pods {
		allNew = allNew && p.rev == w.rev
	}
	if allNew {
		w.currentRev = w.rev
	}
}

func (w *world) tick() {
	for _, p := range w.pods {
		switch {
		case p.starting > 0:
			p.starting--
			p.healthy = p.starting == 0
		case p.crashed > 0:
			p.crashed--
		}
	}
}

// unavailable counts pods that do not serve.
func unavailable(c Component, except int32) int {
	n := 0
	for o, p := range c.Pods {
		if o != except && !p.Available() {
			n++
		}
	}
	return n
}

// checkDecision asserts the invariants of one decision on what it saw.
func checkDecision(c Component, a Action) error {
	switch a.Kind {
	case ScaleIn:
		step := max(c.ScaleInStep, 1)
		if a.Replicas != a.Ordinal || a.Ordinal >= c.Replicas || a.Ordinal < c.Desired || c.Replicas-a.Ordinal > step {
			return fmt.Errorf("scale-in must remove the highest ordinals, at most %d, never below %d: %+v", step, c.Desired, a)
		}
		for o := int32(0); o < a.Ordinal; o++ {
			if !c.Pods[o].Available() {
				return fmt.Errorf("scale-in while pod %d, which stays, is unavailable: %+v", o, c.Pods)
			}
		}
	case UpgradePod:
		if c.Desired != c.Replicas {
			return fmt.Errorf("upgrading while scaling (desired %d, replicas %d)", c.Desired, c.Replicas)
		}
		if unavailable(c, a.Ordinal) > 0 {
			return fmt.Errorf("restarting ordinal %d while another pod is unavailable: %+v", a.Ordinal, c.Pods)
		}
		if a.Partition >= c.Partition {
			return fmt.Errorf("an upgrade step must lower the partition: %d → %d", c.Partition, a.Partition)
		}
	case ScaleOut:
		if a.Replicas <= c.Replicas || a.Replicas > c.Desired || a.Replicas-c.Replicas > 1 {
			return fmt.Errorf("bad scale-out %d → %d (desired %d)", c.Replicas, a.Replicas, c.Desired)
		}
	}
	if a.Replicas < 0 || a.Partition < 0 || a.Partition > a.Replicas {
		return fmt.Errorf("impossible action %+v", a)
	}
	return nil
}

// TestRandomSequencesKeepInvariants runs hundreds of random sequences of
// spec edits (replicas, new revisions) and pod crashes against the planner
// and a StatefulSet model, checking every decision, then checks that the
// component converges once the disturbances stop.
func TestRandomSequencesKeepInvariants(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(20261121))
	for seq := 0; seq < 400; seq++ {
		w := newWorld(int32(1 + rng.Intn(5)))
		w.scaleInStep = int32(rng.Intn(4)) // 0 and 1 both mean one at a time
		for step := 0; step < 80; step++ {
			if step < 50 {
				disturb(rng, w)
			}
			c := w.observe()
			a := Plan(c)
			if err := checkDecision(c, a); err != nil {
				t.Fatalf("sequence %d step %d: %v", seq, step, err)
			}
			w.replicas, w.part = a.Replicas, a.Partition
			w.controller()
			w.tick()
		}
		c := w.observe()
		if a := Plan(c); a.Kind != Nothing || c.Replicas != w.desired || c.Rolling {
			t.Fatalf("sequence %d did not converge: %+v, action %+v", seq, c, a)
		}
	}
}

func disturb(rng *rand.Rand, w *world) {
	switch r := rng.Intn(20); {
	case r == 0:
		w.desired = int32(1 + rng.Intn(6))
	case r == 1:
		w.rev++
	case r == 2 && len(w.pods) > 0:
		o := int32(rng.Intn(int(w.replicas)))
		if p, ok := w.pods[o]; ok {
			p.crashed = 1 + rng.Intn(3)
		}
	}
}
