package simulator

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// pdSampleTiFlashRules is GET /pd/api/v1/config/rules/group/tiflash of a PD v8.5 after
// `ALTER TABLE … SET TIFLASH REPLICA 2` on table 45 (the rule TiDB writes).
const pdSampleTiFlashRules = `[{"group_id": "tiflash", "id": "table-45-r", "index": 120,
  "start_key": "7480000000000000ff2d5f720000000000fa", "end_key": "7480000000000000ff2e00000000000000f8",
  "role": "learner", "is_witness": false, "count": 2,
  "label_constraints": [{"key": "engine", "op": "in", "values": ["tiflash"]}],
  "version": 1, "create_timestamp": 1717000000}]`

func TestTableRecordRangeIsTiDBsEncoding(t *testing.T) {
	t.Parallel()
	for id, want := range map[int64][2]string{
		45: {"7480000000000000ff2d5f720000000000fa", "7480000000000000ff2e00000000000000f8"},
		47: {"7480000000000000ff2f5f720000000000fa", "7480000000000000ff3000000000000000f8"},
	} {
		start, end := tableRecordRange(id)
		if start != want[0] || end != want[1] {
			t.Errorf("table %d: keys %s..%s, want %s..%s", id, start, end, want[0], want[1])
		}
	}
	if got := encodeBytes([]byte("12345678")); len(got) != 18 || got[8] != 0xFF || got[17] != 0xF7 {
		t.Errorf("a full group must be followed by an empty padded group: % x", got)
	}
}

func TestPlacementRulesAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	empty := h.pd(http.MethodGet, "/pd/api/v1/config/rules/group/tiflash", "")
	if empty.status != http.StatusOK || empty.body != "null\n" {
		t.Errorf("no TiFlash rule = %d %q, want 200 null as PD renders an empty group", empty.status, empty.body)
	}
	h.setReplicas(47, 1)
	h.setReplicas(45, 3)
	h.setReplicas(45, 2)
	h.setReplicas(50, 4)
	h.setReplicas(50, 0) // SET TIFLASH REPLICA 0 drops the rule
	r := h.pd(http.MethodGet, "/pd/api/v1/config/rules/group/tiflash", "")
	wantStatus(t, r, http.StatusOK)
	assertSameShape(t, pdSampleTiFlashRules, r.body)
	rules := decode[[]pdapi.PlacementRule](t, r)
	if len(rules) != 2 || rules[0].ID != "table-45-r" || rules[0].Count != 2 || rules[0].Version != 2 ||
		rules[0].StartKeyHex != "7480000000000000ff2d5f720000000000fa" || rules[1].ID != "table-47-r" || rules[1].Count != 1 {
		t.Errorf("rules = %+v", rules)
	}
	pd := decode[[]pdapi.PlacementRule](t, h.pd(http.MethodGet, "/pd/api/v1/config/rules/group/pd", ""))
	if len(pd) != 1 || pd[0].ID != "default" || pd[0].Role != "voter" || pd[0].Count != 3 {
		t.Errorf("PD's default rule = %+v", pd)
	}
	h.with(func(c *Cluster) {
		if c.maxTiFlashReplicas() != 2 {
			t.Errorf("maxTiFlashReplicas = %d, want 2", c.maxTiFlashReplicas())
		}
	})
}

func TestTiFlashStoreDeletedBelowReplicasStaysOffline(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	h.addPods(ComponentTiFlash, 2)
	h.setReplicas(45, 2)
	id := h.tiflashStore("basic-tiflash-1")
	migration := h.reg.Timings().RegionMigrationTime

	// PD checks only max-replicas against every Up store (TiFlash included): 5 - 1 ≥ 3, accepted.
	r := h.pd(http.MethodDelete, "/pd/api/v1/store/"+strconv.FormatUint(id, 10), "")
	wantStatus(t, r, http.StatusOK)
	if got := h.storeState(id); got != pdapi.StoreStateNameOffline {
		t.Fatalf("deleted TiFlash store = %s, want Offline", got)
	}
	h.step(3 * migration)
	if got := h.storeState(id); got != pdapi.StoreStateNameOffline {
		t.Fatalf("TiFlash store whose learners have nowhere to go = %s, want it to stay Offline", got)
	}
	if r := h.storeStatus("basic-tiflash-1"); r.body != "Running" {
		t.Errorf("store-status of an Offline store = %q, want Running (it still serves while it drains)", r.body)
	}
	h.with(func(c *Cluster) {
		if n := c.regionsOf(c.stores[id]); n != 1000 {
			t.Errorf("stuck TiFlash store reports %d regions, want its 1000 learners kept", n)
		}
	})

	h.setReplicas(45, 1) // the replicas now fit on the remaining TiFlash store
	h.step(migration)
	if got := h.storeState(id); got != pdapi.StoreStateNameTombstone {
		t.Fatalf("after lowering the replicas = %s, want Tombstone", got)
	}
	tombstones := decode[pdapi.StoresInfo](t, h.pd(http.MethodGet, "/pd/api/v1/stores?state=2", ""))
	if tombstones.Count != 1 || tombstones.Stores[0].Store.ID != id || !hasEngineLabel(tombstones.Stores[0]) {
		t.Errorf("tombstones = %+v", tombstones)
	}
	if r := h.storeStatus("basic-tiflash-1"); r.body != "Idle" {
		t.Errorf("store-status of a Tombstone store = %q, want Idle", r.body)
	}
}

func hasEngineLabel(s *pdapi.StoreInfo) bool {
	for _, l := range s.Store.Labels {
		if l.Key == "engine" && l.Value == "tiflash" {
			return true
		}
	}
	return false
}

func TestDeleteStoreCountsTiFlashAsPDDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 2, 0) // 2 TiKV stores for 3 replicas
	h.addPods(ComponentTiFlash, 1)
	id := h.tiflashStore("basic-tiflash-0")
	r := h.pd(http.MethodDelete, "/pd/api/v1/store/"+strconv.FormatUint(id, 10), "")
	wantStatus(t, r, http.StatusBadRequest)
	want := "[PD:core:ErrStoresNotEnough]can not remove store 3 since the number of up stores would be 2 while need 3"
	if got := decode[string](t, r); got != want {
		t.Errorf("refusal = %q, want %q", got, want)
	}

	// 3 TiKV + 1 TiFlash: PD accepts removing a TiKV store (3 Up stores remain), but its regions can
	// only go to TiKV stores, so it stays Offline.
	h.addPods(ComponentTiKV, 3)
	wantStatus(t, h.pd(http.MethodDelete, "/pd/api/v1/store/1", ""), http.StatusOK)
	h.step(3 * h.reg.Timings().RegionMigrationTime)
	if got := h.storeState(1); got != pdapi.StoreStateNameOffline {
		t.Fatalf("TiKV store with 2 other TiKV stores = %s, want Offline (TiFlash takes no TiKV replica)", got)
	}
}
