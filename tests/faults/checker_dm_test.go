//go:build integration

package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// DM invariants, checked on the simulated dm-master of a DMCluster scenario (dm_test.go).
const (
	// invDMQuorum: at every observation at least a quorum of the dm-master members is alive.
	invDMQuorum invariant = "dm-master-quorum"
	// invDMDeleteScaledIn: a dm-master member is deleted only when its pod is being scaled in (its
	// ordinal is at or past the wanted replicas).
	invDMDeleteScaledIn invariant = "dm-master-delete-only-scaled-in"
	// invDMLeaderEvicted: the leader never stops being healthy while leading (its pod restarted without
	// an accepted eviction first), and quorum is never lost.
	invDMLeaderEvicted invariant = "dm-leader-evicted-before-restart"
)

// dmChecker polls the simulated dm-master of one DMCluster from after it converged until finish, and
// checks the DM invariants on every observation and on the history once at the end.
type dmChecker struct {
	sim       *simclient.Client
	ns, name  string
	replicas  func() int // the wanted dm-master replicas
	fromSeq   uint64     // history before it is not checked (the cluster's bootstrap)
	mu        sync.Mutex
	checks    map[invariant]int
	violation []string
	stop      context.CancelFunc
	done      chan struct{}
}

func newDMChecker(sim *simclient.Client, ns, name string, replicas func() int) *dmChecker {
	return &dmChecker{sim: sim, ns: ns, name: name, replicas: replicas, checks: map[invariant]int{}, done: make(chan struct{})}
}

// start records where the history begins and polls until finish.
func (c *dmChecker) start(ctx context.Context) error {
	st, err := c.sim.DMCluster(ctx, c.ns, c.name)
	if err != nil {
		return fmt.Errorf("dm-master state: %w", err)
	}
	c.fromSeq = lastSeq(st)
	ctx, c.stop = context.WithCancel(ctx)
	go func() {
		defer close(c.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if st, err := c.sim.DMCluster(ctx, c.ns, c.name); err == nil {
				c.observe(st)
			}
		}
	}()
	return nil
}

func lastSeq(st *api.DMClusterState) uint64 {
	var seq uint64
	for _, l := range st.LeaderChanges {
		seq = max(seq, l.Seq)
	}
	for _, e := range st.Evictions {
		seq = max(seq, e.Seq)
	}
	for _, d := range st.Deletes {
		seq = max(seq, d.Seq)
	}
	return seq
}

func (c *dmChecker) fail(inv invariant, format string, args ...any) {
	c.violation = append(c.violation, string(inv)+": "+fmt.Sprintf(format, args...))
}

// observe checks the quorum of one observation.
func (c *dmChecker) observe(st *api.DMClusterState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks[invDMQuorum]++
	alive := 0
	for _, m := range st.Masters {
		if m.Alive {
			alive++
		}
	}
	if len(st.Masters) > 0 && alive < len(st.Masters)/2+1 {
		c.fail(invDMQuorum, "%d of %d dm-master members alive: %+v", alive, len(st.Masters), st.Masters)
	}
}

// history checks the deletes and leader changes since start.
func (c *dmChecker) history(st *api.DMClusterState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range st.Deletes {
		if d.Seq <= c.fromSeq || d.Kind != "master" || !d.Accepted {
			continue
		}
		c.checks[invDMDeleteScaledIn]++
		if ord := ordinalOf(d.Name); ord < c.replicas() {
			c.fail(invDMDeleteScaledIn, "member %s deleted with %d replicas wanted", d.Name, c.replicas())
		}
	}
	for _, l := range st.LeaderChanges {
		if l.Seq <= c.fromSeq {
			continue
		}
		c.checks[invDMLeaderEvicted]++
		if l.Cause == api.LeaderCauseQuorumLost || (l.Cause == api.LeaderCauseElection && l.From != "") {
			c.fail(invDMLeaderEvicted, "leader change %+v without an eviction (evictions %+v)", l, st.Evictions)
		}
	}
}

// finish stops polling, checks the history and returns the checks and violations.
func (c *dmChecker) finish(ctx context.Context) (map[invariant]int, []string) {
	if c.stop != nil {
		c.stop()
		<-c.done
	}
	if st, err := c.sim.DMCluster(ctx, c.ns, c.name); err != nil {
		c.fail(invDMLeaderEvicted, "no final dm-master state: %v", err)
	} else {
		c.history(st)
	}
	return c.checks, c.violation
}

// ordinalOf is the StatefulSet ordinal of a pod name (-1 when it has none).
func ordinalOf(pod string) int {
	i := strings.LastIndexByte(pod, '-')
	n, err := strconv.Atoi(pod[i+1:])
	if err != nil {
		return -1
	}
	return n
}
