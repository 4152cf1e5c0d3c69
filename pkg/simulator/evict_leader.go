package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// evictLeaderPrefix is the name of PD's evict-leader scheduler. PD < v7 (as the simulator plays it) runs
// one per store, listed as "evict-leader-scheduler-<storeID>"; PD ≥ v7 runs one combined
// "evict-leader-scheduler" for every evicted store.
const evictLeaderPrefix = "evict-leader-scheduler"

// Answers of PD's scheduler API.
const (
	msgSchedulerCreated = "The scheduler is created."
	msgSchedulerApplied = "The scheduler has been applied to the store."
	msgSchedulerRemoved = "The scheduler is removed."
	msgSchedulerExisted = "[PD:scheduler:ErrSchedulerExisted]scheduler existed"
	msgSchedulerMissing = "[PD:scheduler:ErrSchedulerNotFound]scheduler not found"
)

// combinedEvictLeader reports whether PD plays the combined evict-leader scheduler: its leader's (else
// any member's) version is v7 or later, or unknown.
func (c *Cluster) combinedEvictLeader() bool {
	version := c.set.opts.DefaultVersion
	if m, ok := c.members[c.leader]; ok {
		version = m.version
	} else {
		for _, m := range c.sortedMembers() {
			version = m.version
			break
		}
	}
	major := versionPart(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2), 0)
	return major == 0 || major >= 7
}

// schedulerNames lists the running schedulers sorted by name, as `GET /pd/api/v1/schedulers`.
func (c *Cluster) schedulerNames() []string {
	names := make([]string, 0, len(c.schedulers)+len(c.evicting))
	for name := range c.schedulers {
		names = append(names, name)
	}
	switch {
	case len(c.evicting) == 0:
	case c.combinedEvictLeader():
		names = append(names, evictLeaderPrefix)
	default:
		for id := range c.evicting {
			names = append(names, fmt.Sprintf("%s-%d", evictLeaderPrefix, id))
		}
	}
	sort.Strings(names)
	return names
}

// evictedStoreIDs returns the store IDs under an evict-leader scheduler, sorted.
func (c *Cluster) evictedStoreIDs() []uint64 {
	ids := make([]uint64, 0, len(c.evicting))
	for id := range c.evicting {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// addEvictLeader evicts the leaders of storeID and returns PD's answer. Per store (PD < v7): 500 when
// the store is unknown or already evicted. Combined (PD ≥ v7): "created" for the first store, "applied"
// for any later one (also the same again), and 500 with a double-encoded message for an unknown store.
func (c *Cluster) addEvictLeader(storeID uint64) (string, *pdError) {
	combined := c.combinedEvictLeader()
	s, ok := c.stores[storeID]
	switch {
	case !ok && combined:
		quoted, _ := json.Marshal(storeNotFound(storeID))
		return "", &pdError{http.StatusInternalServerError, string(quoted) + "\n"}
	case !ok:
		return "", &pdError{http.StatusInternalServerError, storeNotFound(storeID)}
	case c.evicting[storeID] && combined:
		return msgSchedulerApplied, nil
	case c.evicting[storeID]:
		return "", &pdError{http.StatusInternalServerError, msgSchedulerExisted}
	}
	answer := msgSchedulerCreated
	if combined && len(c.evicting) > 0 {
		answer = msgSchedulerApplied
	}
	c.evicting[storeID] = true
	s.drainFrom = s.leaders
	c.log.Info("evict-leader scheduler added", "store", storeID, "leaders", s.leaders, "combined", combined)
	return answer, nil
}

// removeScheduler is `DELETE /pd/api/v1/schedulers/{name}` and returns PD's answer: 404 when no such
// scheduler runs. With the combined evict-leader scheduler, "evict-leader-scheduler-<id>" takes one
// store out of it and PD answers `null` (200, or 404 when that store is not evicted); the scheduler goes
// with its last store.
func (c *Cluster) removeScheduler(name string) (any, *pdError) {
	combined := c.combinedEvictLeader()
	if suffix, ok := strings.CutPrefix(name, evictLeaderPrefix+"-"); ok {
		id, err := strconv.ParseUint(suffix, 10, 64)
		if err != nil || !c.evicting[id] {
			if combined {
				return nil, &pdError{status: http.StatusNotFound}
			}
			return nil, &pdError{http.StatusNotFound, msgSchedulerMissing}
		}
		delete(c.evicting, id)
		c.log.Info("evict-leader scheduler removed", "store", id)
		if combined {
			return nil, nil
		}
		return msgSchedulerRemoved, nil
	}
	if name == evictLeaderPrefix && combined && len(c.evicting) > 0 {
		c.evicting = map[uint64]bool{}
		c.log.Info("evict-leader scheduler removed for every store")
		return msgSchedulerRemoved, nil
	}
	if !c.schedulers[name] {
		return nil, &pdError{http.StatusNotFound, msgSchedulerMissing}
	}
	delete(c.schedulers, name)
	return msgSchedulerRemoved, nil
}
