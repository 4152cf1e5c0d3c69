package simulator

import (
	"net/http"
	"testing"
)

func sum(m map[uint64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestLeadersSpreadEvenly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	if got := h.leaders(); got[1] != 334 || got[2] != 333 || got[3] != 333 {
		t.Fatalf("leaders = %v, want 334/333/333", got)
	}
}

func TestLeaderDrainUnderEvictionAndReturnAfterRemoval(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	timings := h.reg.Timings()
	h.with(func(c *Cluster) {
		if _, err := c.addEvictLeader(2); err != nil {
			t.Fatalf("add evict leader: %v", err)
		}
		if answer, err := c.addEvictLeader(2); err != nil || answer != msgSchedulerApplied {
			t.Fatalf("second add = %q %v, want the combined scheduler applied again", answer, err)
		}
	})
	h.step(timings.LeaderDrainTime / 2)
	if got := h.leaders()[2]; got <= 0 || got >= 333 {
		t.Fatalf("half-way through the drain store 2 has %d leaders, want some but not all", got)
	}
	h.step(timings.LeaderDrainTime / 2)
	got := h.leaders()
	if got[2] != 0 || sum(got) != 1000 {
		t.Fatalf("after the drain leaders = %v, want 0 on store 2 and 1000 in total", got)
	}
	h.step(5 * timings.LeaderDrainTime)
	if got := h.leaders()[2]; got != 0 {
		t.Fatalf("an evicted store got %d leaders back", got)
	}
	h.with(func(c *Cluster) {
		if _, err := c.removeScheduler("evict-leader-scheduler-2"); err != nil {
			t.Fatalf("remove: %v", err)
		}
		if _, err := c.removeScheduler("evict-leader-scheduler-2"); err == nil || err.status != http.StatusNotFound {
			t.Fatalf("second remove = %v, want 404", err)
		}
	})
	h.step(timings.LeaderReturnTime / 2)
	if got := h.leaders()[2]; got <= 0 || got >= 333 {
		t.Fatalf("half-way through the return store 2 has %d leaders, want some but not all", got)
	}
	h.step(timings.LeaderReturnTime / 2)
	if got := h.leaders(); got[2] != 333 || sum(got) != 1000 {
		t.Fatalf("after the return leaders = %v, want 333 on store 2 and 1000 in total", got)
	}
}

func TestLeadersWaitWhenNoStoreIsEligible(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 0)
	h.setReady("basic-tikv-0", false)
	h.with(func(c *Cluster) {
		if c.stores[1].leaders != 0 || c.unassigned != 1000 {
			t.Fatalf("dead single store holds %d, unassigned %d", c.stores[1].leaders, c.unassigned)
		}
	})
	h.setReady("basic-tikv-0", true)
	if got := h.leaders()[1]; got != 1000 {
		t.Fatalf("single store back up holds %d leaders, want 1000", got)
	}
}

func TestRegionCountChangeKeepsLeaderTotal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	for _, n := range []int{30, 3000, 0} {
		h.with(func(c *Cluster) {
			c.regionCount = n
			c.advanceBy(h.clock.Now(), 0)
		})
		h.step(h.reg.Timings().LeaderReturnTime)
		if got := h.leaders(); sum(got) != n {
			t.Fatalf("region count %d: leaders %v sum to %d", n, got, sum(got))
		}
	}
}

// TestLostLeadersRecordAStopWithLeaders: a store whose pod stops while it
// holds leaders records how many it lost; one evicted to zero first
// records none.
func TestLostLeadersRecordAStopWithLeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	h.setReady("basic-tikv-0", false)
	h.with(func(c *Cluster) {
		if c.stores[1].lostLeaders != 334 {
			t.Errorf("store 1 stopped holding 334 leaders, lostLeaders = %d", c.stores[1].lostLeaders)
		}
		if _, err := c.addEvictLeader(2); err != nil {
			t.Fatalf("add evict leader: %v", err)
		}
	})
	h.step(2 * h.reg.Timings().LeaderDrainTime)
	h.setReady("basic-tikv-1", false)
	h.with(func(c *Cluster) {
		if c.stores[2].leaders != 0 || c.stores[2].lostLeaders != 0 {
			t.Errorf("evicted store 2: leaders %d, lostLeaders %d, want 0 and 0", c.stores[2].leaders, c.stores[2].lostLeaders)
		}
	})
}
