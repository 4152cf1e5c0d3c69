package simulator

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Literal responses of a real PD v8.5 cluster (values differ, shapes must not).
const (
	pdSampleHealth = `[{"name": "basic-pd-0", "member_id": 3474484975246189105,
	  "client_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2379"], "health": true}]`
	pdSampleMember = `{"name": "basic-pd-0", "member_id": 3474484975246189105,
	  "peer_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2380"],
	  "client_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2379"],
	  "deploy_path": "/", "binary_version": "v8.5.0", "git_hash": "ed5f5e2a0eab3b0dc58c4a0b2b2c8a2b4f8b7b11"}`
	pdSampleLeader = `{"name": "basic-pd-0", "member_id": 3474484975246189105,
	  "peer_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2380"],
	  "client_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2379"]}`
	pdSampleMembers = `{"header": {"cluster_id": 7370423847623659243}, "members": [` + pdSampleMember + `],
	  "leader": ` + pdSampleMember + `, "etcd_leader": ` + pdSampleMember + `}`
	pdSampleCluster   = `{"id": 7370423847623659243, "max_peer_count": 3}`
	pdSampleReplicate = `{"max-replicas": 3, "location-labels": "", "strictly-match-label": "false",
	  "enable-placement-rules": "true", "enable-placement-rules-cache": "false", "isolation-level": ""}`
	pdSampleSchedulers = `["balance-hot-region-scheduler", "balance-leader-scheduler", "balance-region-scheduler",
	  "evict-slow-store-scheduler", "evict-stopping-store-scheduler"]`
	pdSampleUpStore = `{"store": {"id": 1, "address": "basic-tikv-0.basic-tikv-peer.default.svc:20160",
	     "labels": [{"key": "zone", "value": "z1"}], "version": "8.5.0",
	     "peer_address": "basic-tikv-0.basic-tikv-peer.default.svc:20160",
	     "status_address": "basic-tikv-0.basic-tikv-peer.default.svc:20180",
	     "git_hash": "d3ba0ac2fd5e9c6ab6fa4b5fa5d35e8e6b4d3c2f", "start_timestamp": 1717000000,
	     "deploy_path": "/", "last_heartbeat": 1717000100123456789, "node_state": 1, "state_name": "Up"},
	   "status": {"capacity": "100GiB", "available": "94.5GiB", "used_size": "312.5MiB",
	     "leader_count": 34, "leader_weight": 1, "leader_score": 34, "leader_size": 34,
	     "region_count": 100, "region_weight": 1, "region_score": 100.5, "region_size": 100,
	     "slow_score": 1, "slow_trend": {"cause_value": 250000, "cause_rate": 0, "result_value": 0, "result_rate": 0},
	     "start_ts": "2024-05-29T16:26:40Z", "last_heartbeat_ts": "2024-05-29T16:28:20.123456789Z",
	     "uptime": "1m40.123456789s"}}`
	pdSampleUpStoreNoLabels = `{"store": {"id": 5, "address": "basic-tikv-1.basic-tikv-peer.default.svc:20160",
	     "version": "8.5.0", "peer_address": "basic-tikv-1.basic-tikv-peer.default.svc:20160",
	     "status_address": "basic-tikv-1.basic-tikv-peer.default.svc:20180",
	     "git_hash": "d3ba0ac2fd5e9c6ab6fa4b5fa5d35e8e6b4d3c2f", "start_timestamp": 1717000002,
	     "deploy_path": "/", "last_heartbeat": 1717000100223456789, "node_state": 1, "state_name": "Up"},
	   "status": {"capacity": "100GiB", "available": "94.5GiB", "used_size": "312.5MiB",
	     "leader_count": 33, "leader_weight": 1, "leader_score": 33, "leader_size": 33,
	     "region_count": 100, "region_weight": 1, "region_score": 100.5, "region_size": 100,
	     "slow_score": 1, "slow_trend": {"cause_value": 250000, "cause_rate": 0, "result_value": 0, "result_rate": 0},
	     "start_ts": "2024-05-29T16:26:42Z", "last_heartbeat_ts": "2024-05-29T16:28:20.223456789Z",
	     "uptime": "1m38.223456789s"}}`
	pdSampleTombstoneStore = `{"store": {"id": 4, "address": "basic-tikv-3.basic-tikv-peer.default.svc:20160",
	     "state": 2, "version": "8.5.0", "peer_address": "basic-tikv-3.basic-tikv-peer.default.svc:20160",
	     "status_address": "basic-tikv-3.basic-tikv-peer.default.svc:20180",
	     "git_hash": "d3ba0ac2fd5e9c6ab6fa4b5fa5d35e8e6b4d3c2f", "start_timestamp": 1717000001,
	     "deploy_path": "/", "last_heartbeat": 1717000900000000000, "node_state": 3, "state_name": "Tombstone"},
	   "status": {"capacity": "100GiB", "available": "100GiB", "used_size": "0B",
	     "leader_count": 0, "leader_weight": 1, "leader_score": 0, "leader_size": 0,
	     "region_count": 0, "region_weight": 1, "region_score": 0, "region_size": 0,
	     "start_ts": "2024-05-29T16:26:41Z", "last_heartbeat_ts": "2024-05-29T16:41:40Z", "uptime": "14m59s"}}`
	pdSampleInvalidInput = `{"code": "input", "msg": "strconv.ParseUint: parsing \"abc\": invalid syntax", "data": {}}`
)

func TestPDContractHealthMembersLeaderCluster(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(3, 3, 0)
	h.setReady("basic-pd-2", false)

	health := h.pd(http.MethodGet, "/pd/api/v1/health", "")
	wantStatus(t, health, http.StatusOK)
	assertSameShape(t, pdSampleHealth, health.body)
	hs := decode[pdapi.HealthInfo](t, health)
	if len(hs) != 3 || !hs[0].Health || !hs[1].Health || hs[2].Health ||
		hs[2].ClientUrls[0] != "http://basic-pd-2.basic-pd-peer.default.svc:2379" {
		t.Errorf("health = %+v", hs)
	}
	if health.header.Get("Content-Type") != "application/json; charset=UTF-8" {
		t.Errorf("content type %q", health.header.Get("Content-Type"))
	}

	members := h.pd(http.MethodGet, "/pd/api/v1/members", "")
	wantStatus(t, members, http.StatusOK)
	assertSameShape(t, pdSampleMembers, members.body)
	mi := decode[pdapi.MembersInfo](t, members)
	cluster := h.pd(http.MethodGet, "/pd/api/v1/cluster", "")
	assertSameShape(t, pdSampleCluster, cluster.body)
	ci := decode[pdapi.Cluster](t, cluster)
	if mi.Header.ClusterID != ci.ID || ci.MaxPeerCount != 3 || len(mi.Members) != 3 ||
		mi.Leader.Name != "basic-pd-0" || mi.EtcdLeader.Name != "basic-pd-0" {
		t.Errorf("members = %+v, cluster = %+v", mi, ci)
	}

	leader := h.pd(http.MethodGet, "/pd/api/v1/leader", "")
	assertSameShape(t, pdSampleLeader, leader.body)
	if l := decode[pdapi.Member](t, leader); l.Name != "basic-pd-0" || l.MemberID != mi.Members[0].MemberID {
		t.Errorf("leader = %+v", l)
	}
}

func TestPDContractStores(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 4, 0)
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/store/1/label", `{"zone": "z1"}`), http.StatusOK)
	wantStatus(t, h.pd(http.MethodDelete, "/pd/api/v1/store/4", ""), http.StatusOK)
	h.step(h.reg.Timings().RegionMigrationTime)

	stores := h.pd(http.MethodGet, "/pd/api/v1/stores", "")
	wantStatus(t, stores, http.StatusOK)
	assertSameShape(t, `{"count": 3, "stores": [`+pdSampleUpStore+`,`+pdSampleUpStoreNoLabels+`]}`, stores.body)
	si := decode[pdapi.StoresInfo](t, stores)
	if si.Count != 3 || len(si.Stores) != 3 || si.Stores[0].Store.Labels[0].Value != "z1" {
		t.Fatalf("stores = %+v", si)
	}
	total := 0
	for _, s := range si.Stores {
		total += s.Status.LeaderCount
		if s.Store.StateName != pdapi.StoreStateNameUp || s.Status.RegionCount != 1000 {
			t.Errorf("store %d: %s with %d regions", s.Store.ID, s.Store.StateName, s.Status.RegionCount)
		}
	}
	if total != 1000 {
		t.Errorf("leaders of Up stores sum to %d, want 1000", total)
	}

	tombstones := h.pd(http.MethodGet, "/pd/api/v1/stores?state=2", "")
	wantStatus(t, tombstones, http.StatusOK)
	assertSameShape(t, `{"count": 1, "stores": [`+pdSampleTombstoneStore+`]}`, tombstones.body)
	if ti := decode[pdapi.StoresInfo](t, tombstones); ti.Count != 1 || ti.Stores[0].Store.ID != 4 ||
		ti.Stores[0].Store.State != pdapi.StoreStateTombstone {
		t.Errorf("tombstones = %+v", ti)
	}

	one := h.pd(http.MethodGet, "/pd/api/v1/store/1", "")
	wantStatus(t, one, http.StatusOK)
	assertSameShape(t, pdSampleUpStore, one.body)
}

func TestPDContractNotBootstrapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	for _, path := range []string{"/pd/api/v1/stores", "/pd/api/v1/store/1", "/pd/api/v1/schedulers"} {
		r := h.pd(http.MethodGet, path, "")
		wantStatus(t, r, http.StatusInternalServerError)
		if r.body != "\"[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first\"\n" {
			t.Errorf("%s body = %q", path, r.body)
		}
	}
	wantStatus(t, h.pd(http.MethodGet, "/pd/api/v1/health", ""), http.StatusOK)
}

func TestPDContractErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	cases := []struct {
		method, path, body string
		status             int
		want               string // exact body; "" skips
	}{
		{"GET", "/pd/api/v1/store/99", "", 404, "\"[PD:core:ErrStoreNotFound]store 99 not found\"\n"},
		{"DELETE", "/pd/api/v1/store/99", "", 404, "\"[PD:core:ErrStoreNotFound]store 99 not found\"\n"},
		{"GET", "/pd/api/v1/stores?state=x", "", 500, "\"strconv.Atoi: parsing \\\"x\\\": invalid syntax\"\n"},
		{"GET", "/pd/api/v1/stores?state=7", "", 500, "\"unknown StoreState: 7\"\n"},
		{"POST", "/pd/api/v1/store/99/label", `{"zone":"a"}`, 500, "\"[PD:cluster:ErrInvalidStoreID]invalid store id 99, not found\"\n"},
		{"POST", "/pd/api/v1/store/1/state?state=Bogus", "", 400, "\"invalid state Bogus\"\n"},
		{"DELETE", "/pd/api/v1/members/name/nope", "", 404, "\"not found, pd: nope\"\n"},
		{"DELETE", "/pd/api/v1/members/id/12", "", 500, "\"[PD:etcd:ErrEtcdMemberRemove]etcdserver: member not found: etcdserver: member not found\"\n"},
		{"DELETE", "/pd/api/v1/members/id/abc", "", 400, "\"strconv.ParseUint: parsing \\\"abc\\\": invalid syntax\"\n"},
		{"POST", "/pd/api/v1/leader/transfer/nope", "", 500, "\"no valid pd to transfer etcd leader\"\n"},
		{"PUT", "/pd/api/v1/members", "", 405, ""},
		{"GET", "/pd/api/v1/no-such-api", "", 404, "404 page not found\n"},
	}
	for _, tc := range cases {
		r := h.pd(tc.method, tc.path, tc.body)
		if r.status != tc.status || (tc.want != "" && r.body != tc.want) {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, r.status, r.body, tc.status, tc.want)
		}
	}
	bad := h.pd(http.MethodGet, "/pd/api/v1/store/abc", "")
	wantStatus(t, bad, http.StatusBadRequest)
	assertSameShape(t, pdSampleInvalidInput, bad.body)
	if bad.header.Get("TiDB-Error-Code") != "input" {
		t.Errorf("TiDB-Error-Code = %q", bad.header.Get("TiDB-Error-Code"))
	}
	for _, body := range []string{`not json`, `{"bad key!": "v"}`, `["zone"]`} {
		r := h.pd(http.MethodPost, "/pd/api/v1/store/1/label", body)
		wantStatus(t, r, http.StatusBadRequest)
		assertSameShape(t, pdSampleInvalidInput, r.body)
	}
}

func TestPDContractConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	replicate := h.pd(http.MethodGet, "/pd/api/v1/config/replicate", "")
	wantStatus(t, replicate, http.StatusOK)
	assertSameShape(t, pdSampleReplicate, replicate.body)

	cfg := decode[pdapi.Config](t, h.pd(http.MethodGet, "/pd/api/v1/config", ""))
	if cfg.Replication.MaxReplicas != 3 || !cfg.Replication.EnablePlacementRules || cfg.Schedule.MaxStoreDownTime.Duration != h.reg.Timings().MaxStoreDownTime {
		t.Errorf("config = %+v", cfg)
	}

	r := h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"max-replicas": 5, "location-labels": "zone,host"}`)
	wantStatus(t, r, http.StatusOK)
	if r.body != "\"The config is updated.\"\n" {
		t.Errorf("body = %q", r.body)
	}
	got := decode[pdapi.ReplicationConfig](t, h.pd(http.MethodGet, "/pd/api/v1/config/replicate", ""))
	if got.MaxReplicas != 5 || len(got.LocationLabels) != 2 || !got.EnablePlacementRules {
		t.Errorf("after POST: %+v", got)
	}
	if c := decode[pdapi.Cluster](t, h.pd(http.MethodGet, "/pd/api/v1/cluster", "")); c.MaxPeerCount != 5 {
		t.Errorf("max_peer_count = %d, want 5", c.MaxPeerCount)
	}
	// PD's boolean config fields are ",string": a bare JSON bool is PD's 500 errcode "internal".
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": true}`), http.StatusInternalServerError)
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"max-replicas": `), http.StatusBadRequest)
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"isolation-level": "rack"}`), http.StatusInternalServerError)
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules": "false"}`), http.StatusOK)
}

// TestPDContractSchedulers plays a PD v5, which runs one evict-leader scheduler per store.
func TestPDContractSchedulers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	pd := h.pods["basic-pd-0"]
	pd.Version = "v5.4.3"
	h.setPod(pd)
	list := h.pd(http.MethodGet, "/pd/api/v1/schedulers", "")
	wantStatus(t, list, http.StatusOK)
	assertSameShape(t, pdSampleSchedulers, list.body)
	if got := decode[[]string](t, list); len(got) != 5 {
		t.Errorf("default schedulers = %v", got)
	}
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1}`, 200, "\"The scheduler is created.\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1}`, 500, "\"[PD:scheduler:ErrSchedulerExisted]scheduler existed\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":9}`, 500, "\"[PD:core:ErrStoreNotFound]store 9 not found\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler"}`, 400, "\"missing store id\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"store_id":1}`, 400, "\"missing scheduler name\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"made-up-scheduler"}`, 400, "\"unknown scheduler\"\n"},
		{"DELETE", "/pd/api/v1/schedulers/evict-leader-scheduler-1", "", 200, "\"The scheduler is removed.\"\n"},
		{"DELETE", "/pd/api/v1/schedulers/evict-leader-scheduler-1", "", 404, "\"[PD:scheduler:ErrSchedulerNotFound]scheduler not found\"\n"},
		{"DELETE", "/pd/api/v1/schedulers/evict-leader-scheduler-x", "", 404, "\"[PD:scheduler:ErrSchedulerNotFound]scheduler not found\"\n"},
	}
	for i, tc := range cases {
		r := h.pd(tc.method, tc.path, tc.body)
		if r.status != tc.status || r.body != tc.want {
			t.Errorf("#%d %s %s %s = %d %q, want %d %q", i, tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.want)
		}
		if i == 0 {
			names := decode[[]string](t, h.pd(http.MethodGet, "/pd/api/v1/schedulers", ""))
			if len(names) != 6 || names[3] != "evict-leader-scheduler-1" {
				t.Errorf("schedulers after adding = %v", names)
			}
			cfg := decode[pdapi.EvictLeaderSchedulerConfig](t, h.pd(http.MethodGet, "/pd/api/v1/scheduler-config/evict-leader-scheduler/list", ""))
			if _, ok := cfg.StoreIDRanges["1"]; !ok || len(cfg.StoreIDRanges) != 1 {
				t.Errorf("scheduler config = %+v", cfg)
			}
		}
	}
}

func TestPDContractMemberDeleteAndTransfer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(3, 0, 0)
	r := h.pd(http.MethodPost, "/pd/api/v1/leader/transfer/basic-pd-1", "")
	if r.status != http.StatusOK || r.body != "\"The transfer command is submitted.\"\n" {
		t.Fatalf("transfer = %d %q", r.status, r.body)
	}
	if l := decode[pdapi.Member](t, h.pd(http.MethodGet, "/pd/api/v1/leader", "")); l.Name != "basic-pd-1" {
		t.Fatalf("leader after transfer = %s", l.Name)
	}
	r = h.pd(http.MethodDelete, "/pd/api/v1/members/name/basic-pd-2", "")
	if r.status != http.StatusOK || r.body != "\"removed, pd: basic-pd-2\"\n" {
		t.Fatalf("delete by name = %d %q", r.status, r.body)
	}
	mi := decode[pdapi.MembersInfo](t, h.pd(http.MethodGet, "/pd/api/v1/members", ""))
	id := mi.Members[0].MemberID
	r = h.pd(http.MethodDelete, "/pd/api/v1/members/id/"+strconv.FormatUint(id, 10), "")
	if r.status != http.StatusOK || r.body != "\"removed, pd: "+strconv.FormatUint(id, 10)+"\"\n" {
		t.Fatalf("delete by id = %d %q", r.status, r.body)
	}
	mi = decode[pdapi.MembersInfo](t, h.pd(http.MethodGet, "/pd/api/v1/members", ""))
	if len(mi.Members) != 1 || mi.Members[0].Name != "basic-pd-1" || mi.Leader.Name != "basic-pd-1" {
		t.Fatalf("members after deletes = %+v", mi)
	}
}

func TestPDReadyIsPerMember(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(3, 1, 0)
	member := "http://basic-pd-1.basic-pd-peer.default.svc:2379/pd/api/v2/ready"
	r := h.proxy(http.MethodGet, member, "")
	if r.status != http.StatusOK || r.body != "" {
		t.Fatalf("ready of a healthy member = %d %q, want 200 and no body", r.status, r.body)
	}
	verbose := h.proxy(http.MethodGet, member+"?verbose", "")
	if verbose.body != "{\n    \"region_loaded\": true\n}" {
		t.Errorf("verbose ready = %q, want PD's indented {\"region_loaded\": true}", verbose.body)
	}
	h.with(func(c *Cluster) { c.members["basic-pd-1"].forcedUnhealthy = true })
	wantStatus(t, h.proxy(http.MethodGet, member, ""), http.StatusInternalServerError)
	if rs := decode[pdapi.ReadyStatus](t, h.proxy(http.MethodGet, member+"?verbose", "")); rs.RegionLoaded {
		t.Errorf("unhealthy member reports regions loaded")
	}
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-pd-0.basic-pd-peer.default:2379/pd/api/v2/ready", ""), http.StatusOK)
}
