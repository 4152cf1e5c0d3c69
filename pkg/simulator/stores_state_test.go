package simulator

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func TestStoresRegisterWhenPDHasLeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentTiKV, 1)
	h.with(func(c *Cluster) {
		if len(c.stores) != 0 || c.bootstrapped {
			t.Fatalf("a TiKV without PD registered: %d stores, bootstrapped=%v", len(c.stores), c.bootstrapped)
		}
	})
	h.addPods(ComponentPD, 1)
	h.with(func(c *Cluster) {
		if len(c.stores) != 1 || !c.bootstrapped {
			t.Fatalf("after PD came up: %d stores, bootstrapped=%v", len(c.stores), c.bootstrapped)
		}
	})
	if got := h.storeState(1); got != pdapi.StoreStateNameUp {
		t.Fatalf("store 1 = %s, want Up", got)
	}
}

func TestStoreDisconnectedThenDownAfterMaxStoreDownTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	h.deletePod("basic-tikv-0")
	if got := h.storeState(1); got != pdapi.StoreStateNameDisconnected {
		t.Fatalf("store of a deleted pod = %s, want Disconnected", got)
	}
	if l := h.leaders(); l[1] != 0 || l[2]+l[3] != 1000 {
		t.Fatalf("leaders after the store died = %v, want all 1000 on stores 2 and 3", l)
	}
	h.step(h.reg.Timings().MaxStoreDownTime)
	if got := h.storeState(1); got != pdapi.StoreStateNameDisconnected {
		t.Fatalf("store at exactly max-store-down-time = %s, want Disconnected (PD compares strictly)", got)
	}
	h.step(time.Millisecond)
	if got := h.storeState(1); got != pdapi.StoreStateNameDown {
		t.Fatalf("store after max-store-down-time = %s, want Down", got)
	}
	// The same pod identity (same PVC) comes back: same store, Up again.
	h.addPods(ComponentTiKV, 3)
	if got := h.storeState(1); got != pdapi.StoreStateNameUp {
		t.Fatalf("store of the returning pod = %s, want Up", got)
	}
	h.with(func(c *Cluster) {
		if len(c.stores) != 3 {
			t.Fatalf("a returning pod with the same PVC made a new store: %d stores", len(c.stores))
		}
	})
}

func TestStoreNotReadyIsDisconnected(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	h.setReady("basic-tikv-1", false)
	if got := h.storeState(2); got != pdapi.StoreStateNameDisconnected {
		t.Fatalf("store of a not-Ready pod = %s, want Disconnected", got)
	}
	h.setReady("basic-tikv-1", true)
	if got := h.storeState(2); got != pdapi.StoreStateNameUp {
		t.Fatalf("store of a Ready-again pod = %s, want Up", got)
	}
}

func TestStoreOfflineToTombstoneOnlyWithEnoughUpStores(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 4, 0)
	migration := h.reg.Timings().RegionMigrationTime
	h.with(func(c *Cluster) {
		if err := c.deleteStore(1, false); err != nil {
			t.Fatalf("delete store 1 with 4 Up stores: %v", err)
		}
		c.stores[2].forcedDown = true // only 2 other live stores remain for 3 replicas
	})
	if got := h.storeState(1); got != pdapi.StoreStateNameOffline {
		t.Fatalf("deleted store = %s, want Offline", got)
	}
	h.step(3 * migration)
	if got := h.storeState(1); got != pdapi.StoreStateNameOffline {
		t.Fatalf("store without enough Up stores = %s, want it to stay Offline", got)
	}
	h.with(func(c *Cluster) { c.stores[2].forcedDown = false })
	h.step(migration / 2)
	h.with(func(c *Cluster) {
		if n := c.regionsOf(c.stores[1]); n <= 0 || n >= c.stores[1].regionsAtOffline {
			t.Fatalf("half-way regions = %d, want between 0 and %d", n, c.stores[1].regionsAtOffline)
		}
	})
	h.step(migration / 2)
	if got := h.storeState(1); got != pdapi.StoreStateNameTombstone {
		t.Fatalf("store after migration = %s, want Tombstone", got)
	}
	h.with(func(c *Cluster) {
		if c.stores[1].leaders != 0 || c.regionsOf(c.stores[1]) != 0 {
			t.Fatalf("tombstone holds %d leaders / %d regions", c.stores[1].leaders, c.regionsOf(c.stores[1]))
		}
	})
}

func TestDeleteStoreRefusedBelowMaxReplicas(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	var err *pdError
	h.with(func(c *Cluster) { err = c.deleteStore(3, false) })
	if err == nil || err.status != http.StatusBadRequest ||
		err.msg != "[PD:core:ErrStoresNotEnough]can not remove store 3 since the number of up stores would be 2 while need 3" {
		t.Fatalf("delete with 3 stores and 3 replicas = %v, want PD's 400 ErrStoresNotEnough", err)
	}
	h.with(func(c *Cluster) { err = c.deleteStore(3, true) })
	if err != nil {
		t.Fatalf("forced delete: %v", err)
	}
	h.step(10 * h.reg.Timings().RegionMigrationTime)
	if got := h.storeState(3); got != pdapi.StoreStateNameOffline {
		t.Fatalf("forced-offline store with 2 other stores = %s, want Offline forever", got)
	}
	// Scaling out gives the replicas a place: the store finishes.
	h.addPods(ComponentTiKV, 4)
	h.step(h.reg.Timings().RegionMigrationTime)
	if got := h.storeState(3); got != pdapi.StoreStateNameTombstone {
		t.Fatalf("after a 4th store joined = %s, want Tombstone", got)
	}
}

func TestDeleteStoreErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 4, 0)
	cases := []struct {
		name   string
		id     uint64
		status int
		msg    string
	}{
		{"unknown store", 42, http.StatusNotFound, "[PD:core:ErrStoreNotFound]store 42 not found"},
	}
	for _, tc := range cases {
		var err *pdError
		h.with(func(c *Cluster) { err = c.deleteStore(tc.id, false) })
		if err == nil || err.status != tc.status || err.msg != tc.msg {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.status, tc.msg)
		}
	}
	h.with(func(c *Cluster) { _ = c.deleteStore(1, false) })
	h.step(h.reg.Timings().RegionMigrationTime)
	var err *pdError
	h.with(func(c *Cluster) { err = c.deleteStore(1, false) })
	if err == nil || err.status != http.StatusGone || !strings.Contains(err.msg, "has been removed") {
		t.Fatalf("delete a tombstone = %v, want 410 removed", err)
	}
}

func TestNewPVCGetsNewStoreOnlyAfterOldAddressIsFree(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 4, 0)
	// basic-tikv-3 comes back with a fresh PVC while its old store is still registered.
	h.setPod(PodObservation{Name: "basic-tikv-3", Component: ComponentTiKV, Running: true, Ready: true, PVCUID: "fresh"})
	h.with(func(c *Cluster) {
		if len(c.stores) != 4 {
			t.Fatalf("a duplicated address registered: %d stores", len(c.stores))
		}
	})
	if got := h.storeState(4); got != pdapi.StoreStateNameDisconnected {
		t.Fatalf("old store of the replaced PVC = %s, want Disconnected", got)
	}
	h.with(func(c *Cluster) {
		if err := c.deleteStore(4, false); err != nil {
			t.Fatalf("delete old store: %v", err)
		}
	})
	h.step(h.reg.Timings().RegionMigrationTime)
	h.with(func(c *Cluster) {
		s := c.storeByIdentity(identity{pod: "basic-tikv-3", pvcUID: "fresh"})
		if s == nil || s.id != 5 || c.stores[4].state != pdapi.StoreStateTombstone {
			t.Fatalf("after the old store became Tombstone: new store %+v, old state %v", s, c.stores[4].state)
		}
	})
}

func TestSetStoreStateUpCancelsOffline(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 4, 0)
	h.with(func(c *Cluster) {
		if err := c.setStoreState(2, "Offline"); err != nil {
			t.Fatalf("state=Offline: %v", err)
		}
		if err := c.setStoreState(2, "Up"); err != nil {
			t.Fatalf("state=Up: %v", err)
		}
		if err := c.setStoreState(2, "Tombstone"); err == nil || err.status != http.StatusBadRequest {
			t.Fatalf("state=Tombstone = %v, want 400", err)
		}
	})
	h.step(h.reg.Timings().RegionMigrationTime)
	if got := h.storeState(2); got != pdapi.StoreStateNameUp {
		t.Fatalf("store after cancelling offline = %s, want Up", got)
	}
}
