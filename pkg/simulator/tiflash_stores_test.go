package simulator

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// pdSampleTiFlashStore is a TiFlash store as a real PD v8.1 lists it (operator-managed, on Kubernetes).
const pdSampleTiFlashStore = `{"store": {"id": 20, "address": "basic-tiflash-0.basic-tiflash-peer.default.svc:3930",
     "labels": [{"key": "engine", "value": "tiflash"}], "version": "v8.1.0",
     "peer_address": "basic-tiflash-0.basic-tiflash-peer.default.svc:20170",
     "status_address": "basic-tiflash-0.basic-tiflash-peer.default.svc:20292",
     "git_hash": "c1838001167c8ba83af759085a71ad61e6c2a5af", "start_timestamp": 1735095904, "deploy_path": "/tiflash",
     "last_heartbeat": 1735098074657264947, "node_state": 1, "state_name": "Up"},
   "status": {"capacity": "311.7GiB", "available": "222.1GiB", "used_size": "1B", "leader_count": 0,
     "leader_weight": 1, "leader_score": 0, "leader_size": 0, "region_count": 0, "region_weight": 1,
     "region_score": 0, "region_size": 0, "slow_score": 1,
     "slow_trend": {"cause_value": 250039.13468013468, "cause_rate": 0, "result_value": 0, "result_rate": 0},
     "start_ts": "2024-12-25T03:05:04Z", "last_heartbeat_ts": "2024-12-25T03:41:14.657264947Z",
     "uptime": "36m10.657264947s"}}`

// tiflashStore returns the store of a TiFlash pod (same identity), failing when it has none.
func (h *harness) tiflashStore(pod string) uint64 {
	h.t.Helper()
	var id uint64
	h.with(func(c *Cluster) {
		p := c.pods[pod]
		s := c.storeByIdentity(identity{pod: p.Name, pvcUID: p.PVCUID})
		if s == nil || s.comp != ComponentTiFlash {
			h.t.Fatalf("TiFlash pod %s has no TiFlash store (%+v)", pod, s)
		}
		id = s.id
	})
	return id
}

// storeCount counts the stores of comp.
func (h *harness) storeCount(comp Component) int {
	n := 0
	h.with(func(c *Cluster) {
		for _, s := range c.stores {
			if s.comp == comp {
				n++
			}
		}
	})
	return n
}

// storeStatus asks a TiFlash pod's proxy status port, as the operator does.
func (h *harness) storeStatus(pod string) response {
	h.t.Helper()
	return h.proxy(http.MethodGet, "http://"+pod+".basic-tiflash-peer.default:20292/tiflash/store-status", "")
}

// setReplicas sets a table's TiFlash replicas as the admin API does, failing on error.
func (h *harness) setReplicas(tableID int64, count int) {
	h.t.Helper()
	h.with(func(c *Cluster) {
		if err := c.setTiFlashReplicas(tableID, count, h.clock.Now()); err != nil {
			h.t.Fatalf("set TiFlash replicas: %v", err)
		}
	})
}

func TestTiFlashStoresRegisterOnlyAfterTiKVBootstrapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiFlash, 2)
	if n := h.storeCount(ComponentTiFlash); n != 0 {
		t.Fatalf("%d TiFlash stores registered before a TiKV bootstrapped the cluster", n)
	}
	if r := h.storeStatus("basic-tiflash-0"); r.status != 200 || r.body != "Idle" {
		t.Errorf("store-status before registration = %d %q, want 200 Idle", r.status, r.body)
	}
	h.addPods(ComponentTiKV, 3)
	h.with(func(c *Cluster) {
		if !c.bootstrapped || c.stores[1].comp != ComponentTiKV {
			t.Fatalf("the first store must be a TiKV store bootstrapping the cluster: %+v", c.stores[1])
		}
	})
	id := h.tiflashStore("basic-tiflash-0")
	if got := h.storeState(id); got != pdapi.StoreStateNameUp {
		t.Fatalf("TiFlash store = %s, want Up", got)
	}
	r := h.storeStatus("basic-tiflash-0")
	if r.status != 200 || r.body != "Running" {
		t.Errorf("store-status of an Up store = %d %q, want 200 Running (a bare word)", r.status, r.body)
	}

	h.step(time.Second) // PD reports an uptime once the store has heartbeated for a while
	stores := h.pd(http.MethodGet, "/pd/api/v1/stores", "")
	wantStatus(t, stores, http.StatusOK)
	si := decode[pdapi.StoresInfo](t, stores)
	if si.Count != 5 {
		t.Fatalf("PD lists %d stores, want 3 TiKV + 2 TiFlash", si.Count)
	}
	var flash *pdapi.StoreInfo
	for _, s := range si.Stores {
		if s.Store.ID == id {
			flash = s
		}
	}
	store := h.pd(http.MethodGet, "/pd/api/v1/store/"+strconv.FormatUint(id, 10), "")
	assertSameShape(t, pdSampleTiFlashStore, store.body)
	m := flash.Store
	if m.Address != "basic-tiflash-0.basic-tiflash-peer.default.svc:3930" ||
		m.PeerAddress != "basic-tiflash-0.basic-tiflash-peer.default.svc:20170" ||
		m.StatusAddress != "basic-tiflash-0.basic-tiflash-peer.default.svc:20292" || m.Version != "v8.5.0" ||
		len(m.Labels) != 1 || m.Labels[0].Key != "engine" || m.Labels[0].Value != "tiflash" || m.DeployPath != "/tiflash" {
		t.Errorf("TiFlash store = %+v, labels %+v", m, m.Labels)
	}
	if flash.Status.LeaderCount != 0 || flash.Status.RegionCount != 0 {
		t.Errorf("TiFlash store without replicas holds %d leaders, %d regions", flash.Status.LeaderCount, flash.Status.RegionCount)
	}
}

func TestTiFlashStoreNeedsPlacementRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	// PD ≥ 5 starts with placement rules enabled; a test turns them off as a user could.
	cfg := decode[pdapi.Config](t, h.pd(http.MethodGet, "/pd/api/v1/config", ""))
	if !cfg.Replication.EnablePlacementRules {
		t.Fatal("placement rules must start enabled, as in PD ≥ 5")
	}
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": "false"}`), http.StatusOK)
	h.addPods(ComponentTiFlash, 1)
	h.step(h.reg.Timings().LeaderReturnTime)
	if n := h.storeCount(ComponentTiFlash); n != 0 {
		t.Fatalf("%d TiFlash stores registered without placement rules", n)
	}
	if r := h.storeStatus("basic-tiflash-0"); r.body != "Idle" {
		t.Errorf("store-status of a refused TiFlash = %q, want Idle", r.body)
	}
	if r := h.pd(http.MethodGet, "/pd/api/v1/config/rules/group/tiflash", ""); r.status != http.StatusPreconditionFailed ||
		decode[string](t, r) != "[PD:placement:ErrPlacementDisabled]placement rules feature is disabled" {
		t.Errorf("rules while disabled = %d %s, want PD's 412", r.status, r.body)
	}

	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": "true"}`), http.StatusOK)
	h.step(0)
	h.tiflashStore("basic-tiflash-0")
	r := h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": "false"}`)
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "cannot disable placement rules with TiFlash nodes") {
		t.Errorf("disabling with a TiFlash store = %d %s, want PD's 500", r.status, r.body)
	}
	if r := h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": true}`); r.status != http.StatusInternalServerError ||
		!strings.Contains(r.body, `"code": "internal"`) {
		t.Errorf("a bare JSON bool = %d %s, want 500 errcode internal as PD (the field is a JSON string)", r.status, r.body)
	}
}

func TestChangingPlacementRulesNeedsBootstrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	r := h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": "false"}`)
	if r.status != http.StatusInternalServerError || !strings.Contains(r.body, "TiKV cluster not bootstrapped") {
		t.Errorf("changing placement rules before bootstrap = %d %s, want PD's 500 ErrNotBootstrapped", r.status, r.body)
	}
	// PD v8.5 refuses every replication write before bootstrap, whatever it names.
	for _, body := range []string{`{"enable-placement-rules": "true", "max-replicas": 1}`, `{"max-replicas": 1}`, `{"location-labels": "zone"}`} {
		r := h.pd(http.MethodPost, "/pd/api/v1/config/replicate", body)
		if r.status != http.StatusInternalServerError || decode[string](t, r) != msgNotBootstrapped {
			t.Errorf("POST /config/replicate %s before bootstrap = %d %s, want 500 ErrNotBootstrapped", body, r.status, r.body)
		}
	}
	if r := h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": true}`); r.status != http.StatusInternalServerError ||
		decode[errcodeInternal](t, r).Msg != "json: invalid use of ,string struct tag, trying to unmarshal unquoted value into bool" {
		t.Errorf("unquoted boolean before bootstrap = %d %s, want PD's 500 errcode (decoding comes first)", r.status, r.body)
	}
	wantStatus(t, h.pd(http.MethodGet, "/pd/api/v1/config/rules/group/tiflash", ""), http.StatusInternalServerError)
}

func TestTiFlashStoresHoldNoLeadersAndAreNotTiKV(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 1)
	h.addPods(ComponentTiFlash, 2)
	h.setReplicas(45, 2)
	h.step(h.reg.Timings().LeaderReturnTime)
	h.with(func(c *Cluster) {
		for _, s := range c.sortedStores() {
			switch {
			case s.comp == ComponentTiFlash && (s.leaders != 0 || c.regionsOf(s) != 1000):
				t.Errorf("TiFlash store %d: %d leaders, %d regions; want 0 and every region's learner", s.id, s.leaders, c.regionsOf(s))
			case s.comp == ComponentTiKV && c.regionsOf(s) != 1000:
				t.Errorf("TiKV store %d: %d regions; TiFlash stores must not dilute TiKV replicas", s.id, c.regionsOf(s))
			}
		}
	})
	if l := h.leaders(); l[1]+l[2]+l[3] != 1000 {
		t.Errorf("leaders = %v, want all 1000 on the TiKV stores", l)
	}
	for _, pod := range []string{"basic-tikv-0", "basic-tikv-1", "basic-tikv-2"} {
		h.setReady(pod, false)
	}
	h.with(func(c *Cluster) {
		if ok, why := c.tidbStorageReachable(); ok || why != "no TiKV store is Up" {
			t.Errorf("TiDB's storage with only TiFlash stores Up = %v %q, want unreachable: no TiKV store is Up", ok, why)
		}
	})
}

func TestTiFlashStoreDisconnectedDownAndBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	h.addPods(ComponentTiFlash, 1)
	id := h.tiflashStore("basic-tiflash-0")
	h.deletePod("basic-tiflash-0")
	if got := h.storeState(id); got != pdapi.StoreStateNameDisconnected {
		t.Fatalf("store of a deleted TiFlash pod = %s, want Disconnected", got)
	}
	if r := h.storeStatus("basic-tiflash-0"); r.status != http.StatusBadGateway {
		t.Errorf("store-status of a deleted pod = %d, want 502 (connection refused through the proxy)", r.status)
	}
	h.step(h.reg.Timings().MaxStoreDownTime + 1)
	if got := h.storeState(id); got != pdapi.StoreStateNameDown {
		t.Fatalf("after max-store-down-time = %s, want Down", got)
	}
	h.addPods(ComponentTiFlash, 1)
	if got := h.storeState(id); got != pdapi.StoreStateNameUp || h.storeCount(ComponentTiFlash) != 1 {
		t.Fatalf("returning TiFlash pod with its PVC = %s (%d stores), want the same store Up", got, h.storeCount(ComponentTiFlash))
	}
	h.with(func(c *Cluster) { c.stores[id].forcedDown = true })
	if r := h.storeStatus("basic-tiflash-0"); r.body != "Idle" {
		t.Errorf("store-status of a store forced Down = %q, want Idle", r.body)
	}
}
