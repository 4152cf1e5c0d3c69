package simulator

import (
	"net/http"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// The leader model: the cluster has regionCount region leaders. A store that stops heartbeating loses its
// leaders at once (the other replicas elect new ones within a Raft election timeout); a store under an
// evict-leader scheduler, or going Offline, sheds its leaders within LeaderDrainTime; leaders nobody holds
// go at once to the eligible stores (heartbeating, Up, not evicted) that are below their even share; and
// balancing moves leaders from stores above their share to stores below it within LeaderReturnTime.

// leaderEligible reports whether the store may hold leaders: a TiKV store (TiFlash holds learners only)
// that is Up, heartbeating and not evicted.
func (c *Cluster) leaderEligible(s *store) bool {
	return s.comp == ComponentTiKV && s.state == pdapi.StoreStateUp && c.storeLive(s) && !c.evicting[s.id]
}

// moveLeaders runs one step of dt of the leader model.
func (c *Cluster) moveLeaders(dt time.Duration) {
	c.reconcileLeaderTotal()
	stores := c.sortedStores()
	for _, s := range stores {
		if !c.storeLive(s) && s.leaders > 0 {
			c.unassigned += s.leaders
			s.lostLeaders = s.leaders
			s.leaders = 0
		}
	}
	for _, s := range stores {
		if s.leaders > 0 && (c.evicting[s.id] || s.state != pdapi.StoreStateUp) {
			n := min(s.leaders, rateAmount(max(s.drainFrom, 1), dt, c.timings().LeaderDrainTime))
			s.leaders -= n
			c.unassigned += n
		}
	}
	targets := c.leaderTargets(stores)
	c.assignUnassigned(stores, targets)
	c.balanceLeaders(dt, stores, targets)
}

// rateAmount is how much of total moves in dt when all of it moves in period; at least 1 for any dt > 0,
// and everything at once when period is zero.
func rateAmount(total int, dt, period time.Duration) int {
	if period <= 0 {
		return total
	}
	if dt <= 0 {
		return 0
	}
	return ceilInt(float64(total) * float64(dt) / float64(period))
}

// reconcileLeaderTotal keeps held plus unassigned leaders equal to the region count after it changed.
func (c *Cluster) reconcileLeaderTotal() {
	held := 0
	for _, s := range c.stores {
		held += s.leaders
	}
	excess := held + c.unassigned - c.regionCount
	if excess <= 0 {
		c.unassigned -= excess
		return
	}
	take := min(excess, c.unassigned)
	c.unassigned -= take
	excess -= take
	for excess > 0 {
		richest := c.richestStore()
		if richest == nil {
			return
		}
		take := min(excess, richest.leaders)
		richest.leaders -= take
		excess -= take
	}
}

func (c *Cluster) richestStore() *store {
	var best *store
	for _, s := range c.sortedStores() {
		if s.leaders > 0 && (best == nil || s.leaders > best.leaders) {
			best = s
		}
	}
	return best
}

// leaderTargets splits the region count evenly over the eligible stores (lower IDs take the remainder).
func (c *Cluster) leaderTargets(stores []*store) map[uint64]int {
	var eligible []*store
	for _, s := range stores {
		if c.leaderEligible(s) {
			eligible = append(eligible, s)
		}
	}
	targets := make(map[uint64]int, len(eligible))
	if len(eligible) == 0 {
		return targets
	}
	base, rest := c.regionCount/len(eligible), c.regionCount%len(eligible)
	for i, s := range eligible {
		targets[s.id] = base
		if i < rest {
			targets[s.id]++
		}
	}
	return targets
}

// assignUnassigned gives unheld leaders to eligible stores below their target. The deficits always cover
// the unassigned leaders, because targets sum to the region count.
func (c *Cluster) assignUnassigned(stores []*store, targets map[uint64]int) {
	for _, s := range stores {
		target, ok := targets[s.id]
		if !ok || c.unassigned == 0 {
			continue
		}
		give := min(c.unassigned, max(target-s.leaders, 0))
		s.leaders += give
		c.unassigned -= give
	}
}

// balanceLeaders moves, within dt, leaders from eligible stores above their target to those below it.
func (c *Cluster) balanceLeaders(dt time.Duration, stores []*store, targets map[uint64]int) {
	for _, dst := range stores {
		target, ok := targets[dst.id]
		if !ok || dst.leaders >= target {
			continue
		}
		budget := min(target-dst.leaders, rateAmount(target, dt, c.timings().LeaderReturnTime))
		for budget > 0 {
			src := mostAboveTarget(stores, targets)
			if src == nil {
				break
			}
			n := min(budget, src.leaders-targets[src.id])
			src.leaders -= n
			dst.leaders += n
			budget -= n
		}
	}
}

func mostAboveTarget(stores []*store, targets map[uint64]int) *store {
	var best *store
	for _, s := range stores {
		target, ok := targets[s.id]
		if !ok || s.leaders <= target {
			continue
		}
		if best == nil || s.leaders-target > best.leaders-targets[best.id] {
			best = s
		}
	}
	return best
}

// addScheduler adds one of PD's store-independent schedulers by name.
func (c *Cluster) addScheduler(name string) *pdError {
	known := false
	for _, def := range defaultSchedulers {
		known = known || def == name
	}
	switch {
	case !known:
		return &pdError{http.StatusBadRequest, "unknown scheduler"}
	case c.schedulers[name]:
		return &pdError{http.StatusInternalServerError, "[PD:scheduler:ErrSchedulerExisted]scheduler existed"}
	}
	c.schedulers[name] = true
	return nil
}
