package pdapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/pdapi/pdcontract"
)

// IDs of the contract fixtures (pkg/pdapi/pdcontract/testdata); two member IDs are above 2^63.
const (
	contractClusterID uint64 = 7302001122334455667
	contractPD0ID     uint64 = 13835058055282163713
	contractPD1ID     uint64 = 4611686018427387911
	contractPD2ID     uint64 = 17293822569102704642
	contractUnknownID uint64 = 9876543210987654321
)

// contractPD starts a fake PD answering the contract fixtures from phase and returns it with a real
// client of it; the test fails if the client sent any request the fixtures do not answer.
func contractPD(t *testing.T, phase string) (*pdcontract.PD, pdapi.Client) {
	t.Helper()
	pd := pdcontract.NewPD(phase)
	srv := httptest.NewServer(pd)
	t.Cleanup(func() {
		srv.Close()
		for _, req := range pd.Unmatched() {
			t.Errorf("request outside PD's contract: %s", req)
		}
	})
	return pd, pdapi.NewClientWithHTTP(srv.URL, &http.Client{Timeout: 5 * time.Second})
}

// wantServed fails unless the fake PD answered every named exchange.
func wantServed(t *testing.T, pd *pdcontract.PD, names ...string) {
	t.Helper()
	served := pd.Served()
	for _, name := range names {
		if !slices.Contains(served, name) {
			t.Errorf("exchange %q was not used; served %v", name, served)
		}
	}
}

// wantPhase fails unless the fake PD is in phase.
func wantPhase(t *testing.T, pd *pdcontract.PD, phase string) {
	t.Helper()
	if got := pd.Phase(); got != phase {
		t.Fatalf("PD is in phase %s, want %s", got, phase)
	}
}

func memberNamed(mi *pdapi.MembersInfo, name string) *pdapi.Member {
	for _, m := range mi.Members {
		if m.Name == name {
			return m
		}
	}
	return nil
}

func TestContractMembersDecodeExactIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, phase := range []string{pdcontract.PhaseFresh, pdcontract.PhaseBootstrapped} {
		t.Run(phase, func(t *testing.T) {
			_, c := contractPD(t, phase)
			health, err := c.GetHealth(ctx)
			check(t, "GetHealth", err)
			i := slices.IndexFunc(health, func(h pdapi.MemberHealth) bool { return h.Name == "basic-pd-0" })
			if i < 0 || health[i].MemberID != contractPD0ID || !health[i].Health {
				t.Errorf("health of basic-pd-0 = %+v", health)
			}
			members, err := c.GetMembers(ctx)
			check(t, "GetMembers", err)
			pd0 := memberNamed(members, "basic-pd-0")
			if members.Header.ClusterID != contractClusterID || pd0 == nil || pd0.MemberID != contractPD0ID ||
				members.Leader.MemberID != contractPD0ID || members.EtcdLeader.Name != "basic-pd-0" {
				t.Errorf("members = %+v", members)
			}
			leader, err := c.GetLeader(ctx)
			check(t, "GetLeader", err)
			if leader.Name != "basic-pd-0" || leader.MemberID != contractPD0ID ||
				leader.ClientUrls[0] != "http://basic-pd-0.basic-pd-peer.ns.svc:2379" {
				t.Errorf("leader = %+v", leader)
			}
			cluster, err := c.GetCluster(ctx)
			check(t, "GetCluster", err)
			if cluster.ID != contractClusterID || cluster.MaxPeerCount != 3 {
				t.Errorf("cluster = %+v", cluster)
			}
		})
	}
	_, c := contractPD(t, pdcontract.PhaseBootstrapped)
	members, err := c.GetMembers(ctx)
	check(t, "GetMembers", err)
	pd1, pd2 := memberNamed(members, "basic-pd-1"), memberNamed(members, "basic-pd-2")
	if len(members.Members) != 3 || pd1 == nil || pd2 == nil || pd1.MemberID != contractPD1ID ||
		pd2.MemberID != contractPD2ID || pd1.LeaderPriority != 3 || pd2.LeaderPriority != 0 {
		t.Errorf("members of the 3-member cluster = %+v", members.Members)
	}
}

func TestContractClusterStatus(t *testing.T) {
	t.Parallel()
	for phase, want := range map[string]bool{pdcontract.PhaseFresh: false, pdcontract.PhaseBootstrapped: true} {
		e, ok := pdcontract.Find(phase, http.MethodGet, "/pd/api/v1/cluster/status", nil)
		if !ok {
			t.Fatalf("%s: no cluster/status exchange", phase)
		}
		var st pdapi.ClusterStatus
		if err := json.Unmarshal(e.Answer(), &st); err != nil || st.IsInitialized != want ||
			st.RaftBootstrapTime.IsZero() == want {
			t.Errorf("%s: cluster status = %+v, %v", phase, st, err)
		}
	}
}

func TestContractConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, phase := range []string{pdcontract.PhaseFresh, pdcontract.PhaseBootstrapped} {
		_, c := contractPD(t, phase)
		cfg, err := c.GetConfig(ctx)
		check(t, phase+" GetConfig", err)
		r := cfg.Replication
		if r.MaxReplicas != 3 || !r.EnablePlacementRules || r.StrictlyMatchLabel ||
			cfg.Schedule.MaxStoreDownTime.Duration != 30*time.Minute {
			t.Errorf("%s: config = %+v", phase, cfg)
		}
		if want := phase == pdcontract.PhaseBootstrapped; slices.Equal(r.LocationLabels, []string{"zone"}) != want {
			t.Errorf("%s: location labels = %q", phase, r.LocationLabels)
		}
	}
}

func TestContractNotBootstrapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pd, c := contractPD(t, pdcontract.PhaseFresh)
	reads := map[string]func() error{
		"GetStores":          func() error { _, err := c.GetStores(ctx); return err },
		"GetTombstoneStores": func() error { _, err := c.GetTombstoneStores(ctx); return err },
		"GetStore":           func() error { _, err := c.GetStore(ctx, 101); return err },
		"GetEvictLeaderSchedulers": func() error {
			_, err := c.GetEvictLeaderSchedulers(ctx)
			return err
		},
		"GetPlacementRules":  func() error { _, err := c.GetPlacementRules(ctx, pdapi.PlacementGroupTiFlash); return err },
		"MaxTiFlashReplicas": func() error { _, err := c.MaxTiFlashReplicas(ctx); return err },
		// Writes are refused too: none may be needed before a TiKV exists.
		"DeleteStore":          func() error { return c.DeleteStore(ctx, 101) },
		"BeginEvictLeader":     func() error { return c.BeginEvictLeader(ctx, 101) },
		"EnablePlacementRules": func() error { return c.EnablePlacementRules(ctx) },
	}
	for name, call := range reads {
		err := call()
		if !errors.Is(err, pdapi.ErrTiKVNotBootstrapped) || errors.Is(err, pdapi.ErrNotFound) {
			t.Errorf("%s before bootstrap = %v, want ErrTiKVNotBootstrapped", name, err)
		}
	}
	// Only a JSON string reaches PD's bootstrap check; a bare boolean would have matched the errcode answer.
	wantServed(t, pd, "fresh/GET stores", "fresh/GET tombstone stores", "fresh/GET store", "fresh/GET schedulers",
		"fresh/GET tiflash rules", "fresh/DELETE store", "fresh/POST evict-leader scheduler",
		"fresh/POST replicate enable placement rules")
	ready, err := c.GetReady(ctx)
	if ready || err != nil {
		t.Errorf("GetReady before bootstrap = %v, %v; want false, nil", ready, err)
	}
}

func TestContractStoreStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type want struct {
		name  string
		state pdapi.StoreState
		node  pdapi.NodeState
	}
	cases := []struct {
		phase      string
		stores     map[uint64]want
		tombstones []uint64
	}{
		{pdcontract.PhaseBootstrapped, map[uint64]want{101: {"Up", 0, 1}, 102: {"Up", 0, 1}, 103: {"Up", 0, 1}, 104: {"Up", 0, 1}}, nil},
		{pdcontract.PhaseStoreOffline, map[uint64]want{101: {"Up", 0, 1}, 104: {"Offline", 1, 2}}, nil},
		{pdcontract.PhaseStoreTombstone, map[uint64]want{101: {"Up", 0, 1}, 103: {"Up", 0, 1}}, []uint64{104}},
		{pdcontract.PhaseStoreDisconnected, map[uint64]want{101: {"Disconnected", 0, 1}, 102: {"Up", 0, 1}}, nil},
		{pdcontract.PhaseStoreDown, map[uint64]want{101: {"Down", 0, 1}, 102: {"Up", 0, 1}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.phase, func(t *testing.T) {
			_, c := contractPD(t, tc.phase)
			stores, err := c.GetStores(ctx)
			check(t, "GetStores", err)
			byID := map[uint64]*pdapi.StoreInfo{}
			for _, s := range stores.Stores {
				byID[s.Store.ID] = s
			}
			if stores.Count != len(stores.Stores) {
				t.Errorf("count %d for %d stores", stores.Count, len(stores.Stores))
			}
			for id, w := range tc.stores {
				s := byID[id]
				if s == nil || s.Store.StateName != w.name || s.Store.State != w.state || s.Store.NodeState != w.node {
					t.Errorf("store %d = %+v, want %+v", id, s, w)
				}
			}
			for _, id := range tc.tombstones {
				if byID[id] != nil {
					t.Errorf("tombstone %d is listed by GetStores", id)
				}
			}
			tombstones, err := c.GetTombstoneStores(ctx)
			check(t, "GetTombstoneStores", err)
			var got []uint64
			for _, s := range tombstones.Stores {
				if s.Store.StateName != pdapi.StoreStateNameTombstone || s.Store.State != pdapi.StoreStateTombstone ||
					s.Store.NodeState != pdapi.NodeStateRemoved {
					t.Errorf("tombstone list has %+v", s.Store)
				}
				got = append(got, s.Store.ID)
			}
			if !slices.Equal(got, tc.tombstones) || tombstones.Stores == nil {
				t.Errorf("tombstones = %v (%+v), want %v", got, tombstones, tc.tombstones)
			}
		})
	}
}

func TestContractStoreDecodesStrings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c := contractPD(t, pdcontract.PhaseBootstrapped)
	s, err := c.GetStore(ctx, 101)
	check(t, "GetStore", err)
	if s.Store.Address != "basic-tikv-0.basic-tikv-peer.ns.svc:20160" || s.Status.Capacity != 100<<30 ||
		s.Status.UsedSize < 1<<30 || s.Status.Uptime == nil || s.Status.Uptime.Duration < time.Minute ||
		time.Unix(0, s.Store.LastHeartbeat).Year() != 2026 || len(s.Store.Labels) != 1 || s.Store.Labels[0].Key != "zone" {
		t.Errorf("store 101 = %+v %+v", s.Store, s.Status)
	}
	_, err = c.GetStore(ctx, 404)
	assertError(t, err, pdapi.ErrNotFound, http.StatusNotFound, "ErrStoreNotFound")
}

func TestContractStoreWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pd, c := contractPD(t, pdcontract.PhaseBootstrapped)
	check(t, "DeleteStore of an unknown store", c.DeleteStore(ctx, 404))
	check(t, "SetStoreLabels", c.SetStoreLabels(ctx, 101, map[string]string{"zone": "z1"}))
	check(t, "SetStoreLabels engine", c.SetStoreLabels(ctx, 102, map[string]string{"engine": "tikv"}))
	assertError(t, c.SetStoreLabels(ctx, 404, map[string]string{"zone": "z1"}), nil, http.StatusInternalServerError, "ErrInvalidStoreID")
	check(t, "SetStoreState Up", c.SetStoreState(ctx, 101, "Up"))
	assertError(t, c.SetStoreState(ctx, 101, "Bogus"), nil, http.StatusBadRequest, "invalid state Bogus")
	check(t, "DeleteStore", c.DeleteStore(ctx, 104))
	wantPhase(t, pd, pdcontract.PhaseStoreOffline)
	err := c.DeleteStore(ctx, 103)
	assertError(t, err, nil, http.StatusBadRequest, "ErrStoresNotEnough")
	if errors.Is(err, pdapi.ErrNotFound) {
		t.Errorf("a refused deletion reads as an absent store: %v", err)
	}
	pd.SetPhase(pdcontract.PhaseStoreTombstone)
	check(t, "DeleteStore of a tombstone", c.DeleteStore(ctx, 104))
	wantServed(t, pd, "bootstrapped/DELETE unknown store", "bootstrapped/POST store engine label",
		"bootstrapped/DELETE store", "store-offline/DELETE store below max-replicas", "store-tombstone/DELETE store")
}

func TestContractEvictLeaderCombinedScheduler(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pd, c := contractPD(t, pdcontract.PhaseBootstrapped)
	evicted := func(want ...uint64) {
		t.Helper()
		ids, err := c.GetEvictLeaderSchedulers(ctx)
		check(t, "GetEvictLeaderSchedulers", err)
		if !slices.Equal(ids, append([]uint64{}, want...)) {
			t.Errorf("evicted stores = %v, want %v (phase %s)", ids, want, pd.Phase())
		}
	}
	evicted()
	check(t, "EndEvictLeader of a store not evicted", c.EndEvictLeader(ctx, 103))
	check(t, "BeginEvictLeader", c.BeginEvictLeader(ctx, 103))
	wantPhase(t, pd, pdcontract.PhaseEvictingOne)
	evicted(103)
	check(t, "BeginEvictLeader again", c.BeginEvictLeader(ctx, 103))
	check(t, "EndEvictLeader of another store", c.EndEvictLeader(ctx, 104))
	check(t, "BeginEvictLeader of another store", c.BeginEvictLeader(ctx, 104))
	wantPhase(t, pd, pdcontract.PhaseEvictingTwo)
	evicted(103, 104)
	check(t, "BeginEvictLeader again with two", c.BeginEvictLeader(ctx, 104))
	check(t, "EndEvictLeader of one of two", c.EndEvictLeader(ctx, 104))
	wantPhase(t, pd, pdcontract.PhaseEvictingOne)
	evicted(103)
	check(t, "EndEvictLeader of the last", c.EndEvictLeader(ctx, 103))
	wantPhase(t, pd, pdcontract.PhaseBootstrapped)
	evicted()
	err := c.BeginEvictLeader(ctx, 404)
	assertError(t, err, nil, http.StatusInternalServerError, "ErrStoreNotFound", "store 404 not found")
	wantServed(t, pd, "evicting-one/GET evict-leader config",
		"evicting-two/GET evict-leader config", "evicting-one/POST evict-leader scheduler again",
		"evicting-one/DELETE evict-leader scheduler of a store not evicted", "bootstrapped/DELETE evict-leader scheduler",
		"bootstrapped/POST evict-leader scheduler for unknown store")
}

func TestContractPlacementRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pd, c := contractPD(t, pdcontract.PhaseBootstrapped)
	rules, err := c.GetPlacementRules(ctx, pdapi.PlacementGroupTiFlash)
	check(t, "GetPlacementRules", err)
	if rules == nil || len(rules) != 0 {
		t.Errorf("rules of an empty group = %#v, want an empty slice", rules)
	}
	check(t, "EnablePlacementRules", c.EnablePlacementRules(ctx))
	wantPhase(t, pd, pdcontract.PhaseBootstrapped)
	off := false
	check(t, "disable placement rules", c.UpdateReplicationConfig(ctx, pdapi.ReplicationConfigUpdate{EnablePlacementRules: &off}))
	wantPhase(t, pd, pdcontract.PhasePlacementDisabled)
	_, err = c.GetPlacementRules(ctx, pdapi.PlacementGroupTiFlash)
	assertError(t, err, pdapi.ErrPlacementRulesDisabled, http.StatusPreconditionFailed)
	if n, err := c.MaxTiFlashReplicas(ctx); n != 0 || err != nil {
		t.Errorf("MaxTiFlashReplicas while disabled = %d, %v; want 0, nil", n, err)
	}
	check(t, "EnablePlacementRules after disabling", c.EnablePlacementRules(ctx))
	wantPhase(t, pd, pdcontract.PhaseBootstrapped)
	if n, err := c.MaxTiFlashReplicas(ctx); n != 0 || err != nil {
		t.Errorf("MaxTiFlashReplicas = %d, %v; want 0, nil", n, err)
	}
	wantServed(t, pd, "bootstrapped/POST replicate enable placement rules", "placement-disabled/POST replicate enable placement rules")
}

func TestContractMemberWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pd, c := contractPD(t, pdcontract.PhaseBootstrapped)
	check(t, "TransferPDLeader", c.TransferPDLeader(ctx, "basic-pd-1"))
	assertError(t, c.TransferPDLeader(ctx, "basic-pd-9"), nil, http.StatusInternalServerError, "no valid pd to transfer etcd leader")
	check(t, "DeleteMember", c.DeleteMember(ctx, "basic-pd-2"))
	check(t, "DeleteMember of an unknown name", c.DeleteMember(ctx, "basic-pd-9"))
	check(t, "DeleteMemberByID", c.DeleteMemberByID(ctx, contractPD2ID))
	check(t, "DeleteMemberByID of an unknown id", c.DeleteMemberByID(ctx, contractUnknownID))
	wantServed(t, pd, "bootstrapped/POST leader transfer", "bootstrapped/DELETE member by unknown name",
		"bootstrapped/DELETE member by id")

	// PD answers an unknown id with 500, so the client must not send it at all.
	fresh, fc := contractPD(t, pdcontract.PhaseFresh)
	check(t, "DeleteMemberByID of an unknown id before bootstrap", fc.DeleteMemberByID(ctx, contractUnknownID))
	if slices.Contains(fresh.Served(), "fresh/DELETE member by unknown id") {
		t.Errorf("the client sent PD a member id PD does not know: served %v", fresh.Served())
	}
}

func TestContractReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c := contractPD(t, pdcontract.PhaseBootstrapped)
	if ready, err := c.GetReady(ctx); !ready || err != nil {
		t.Errorf("GetReady after bootstrap = %v, %v; want true, nil", ready, err)
	}
	// A PD without /pd/api/v2/ready answers every missing route with its plain-text 404.
	missing, ok := pdcontract.Find(pdcontract.PhaseBootstrapped, http.MethodGet, "/pd/api/v1/no-such-api", nil)
	if !ok {
		t.Fatal("no exchange for a missing route")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { pdcontract.Write(w, missing) }))
	defer srv.Close()
	old := pdapi.NewClientWithHTTP(srv.URL, &http.Client{Timeout: 5 * time.Second})
	if ready, err := old.GetReady(ctx); !ready || err != nil {
		t.Errorf("GetReady of a PD without the API = %v, %v; want true, nil", ready, err)
	}
}

func TestContractNoLeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, c := contractPD(t, pdcontract.PhaseNoLeader)
	_, err := c.GetMembers(ctx)
	assertError(t, err, nil, http.StatusServiceUnavailable, "ErrLeaderNil")
	_, err = c.GetStores(ctx)
	assertError(t, err, nil, http.StatusServiceUnavailable, "ErrLeaderNil")
	if errors.Is(err, pdapi.ErrTiKVNotBootstrapped) || errors.Is(err, pdapi.ErrNotFound) {
		t.Errorf("no leader reads as %v", err)
	}
}

// TestContractCoversEveryClientCall fails when an endpoint the client calls has no fixture exchange in
// both a fresh and a bootstrapped PD (the answers the operator meets first and most).
func TestContractCoversEveryClientCall(t *testing.T) {
	t.Parallel()
	calls := []struct{ method, prefix string }{
		{"GET", "/pd/api/v1/health"}, {"GET", "/pd/api/v1/cluster"}, {"GET", "/pd/api/v1/members"},
		{"GET", "/pd/api/v1/leader"}, {"GET", "/pd/api/v1/stores"}, {"GET", "/pd/api/v1/stores?state=2"},
		{"GET", "/pd/api/v1/store/"}, {"GET", "/pd/api/v1/config"}, {"GET", "/pd/api/v2/ready"},
		{"GET", "/pd/api/v1/schedulers"}, {"GET", "/pd/api/v1/scheduler-config/evict-leader-scheduler/list"},
		{"GET", "/pd/api/v1/config/rules/group/tiflash"}, {"POST", "/pd/api/v1/leader/transfer/"},
		{"DELETE", "/pd/api/v1/members/name/"}, {"DELETE", "/pd/api/v1/members/id/"}, {"DELETE", "/pd/api/v1/store/"},
		{"POST", "/pd/api/v1/schedulers"}, {"POST", "/pd/api/v1/config/replicate"},
	}
	bootstrappedOnly := []struct{ method, prefix string }{
		{"POST", "/pd/api/v1/store/"}, {"DELETE", "/pd/api/v1/schedulers/evict-leader-scheduler-"},
	}
	covered := func(phase, method, prefix string) bool {
		for _, e := range pdcontract.Phase(phase) {
			if e.Method == method && len(e.Path) >= len(prefix) && e.Path[:len(prefix)] == prefix {
				return true
			}
		}
		return false
	}
	for _, c := range calls {
		for _, phase := range []string{pdcontract.PhaseFresh, pdcontract.PhaseBootstrapped} {
			if !covered(phase, c.method, c.prefix) {
				t.Errorf("no %s exchange for %s %s", phase, c.method, c.prefix)
			}
		}
	}
	for _, c := range bootstrappedOnly {
		if !covered(pdcontract.PhaseBootstrapped, c.method, c.prefix) {
			t.Errorf("no bootstrapped exchange for %s %s", c.method, c.prefix)
		}
	}
}
