package pdapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Answers of a real PD v8.5 (as rendered by PD's IndentJSON), trimmed to a few elements.
const (
	pdHealthJSON = `[
  {
    "name": "basic-pd-0",
    "member_id": 3474484975246189105,
    "client_urls": [
      "http://basic-pd-0.basic-pd-peer.default.svc:2379"
    ],
    "health": true
  },
  {
    "name": "basic-pd-1",
    "member_id": 10103474784898404870,
    "client_urls": [
      "http://basic-pd-1.basic-pd-peer.default.svc:2379"
    ],
    "health": false
  }
]
`
	pdLeaderJSON = `{
  "name": "basic-pd-0",
  "member_id": 3474484975246189105,
  "peer_urls": [
    "http://basic-pd-0.basic-pd-peer.default.svc:2380"
  ],
  "client_urls": [
    "http://basic-pd-0.basic-pd-peer.default.svc:2379"
  ],
  "deploy_path": "/",
  "binary_version": "v8.5.0",
  "git_hash": "ed5f5e2a0eab3b0dc58c4a0b2b2c8a2b4f8b7b11"
}
`
	pdMembersJSON = `{
  "header": {"cluster_id": 7370423847623659243},
  "members": [
    {"name": "basic-pd-0", "member_id": 3474484975246189105,
     "peer_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2380"],
     "client_urls": ["http://basic-pd-0.basic-pd-peer.default.svc:2379"],
     "deploy_path": "/", "binary_version": "v8.5.0", "git_hash": "ed5f5e2a"},
    {"name": "basic-pd-1", "member_id": 10103474784898404870,
     "peer_urls": ["http://basic-pd-1.basic-pd-peer.default.svc:2380"],
     "client_urls": ["http://basic-pd-1.basic-pd-peer.default.svc:2379"],
     "deploy_path": "/", "binary_version": "v8.5.0", "git_hash": "ed5f5e2a"}
  ],
  "leader": {"name": "basic-pd-0", "member_id": 3474484975246189105},
  "etcd_leader": {"name": "basic-pd-0", "member_id": 3474484975246189105}
}
`
	pdClusterJSON = `{
  "id": 7370423847623659243,
  "max_peer_count": 3
}
`
	pdStoresJSON = `{
  "count": 2,
  "stores": [
    {
      "store": {"id": 1, "address": "basic-tikv-0.basic-tikv-peer.default.svc:20160",
        "labels": [{"key": "zone", "value": "z1"}], "version": "8.5.0",
        "peer_address": "basic-tikv-0.basic-tikv-peer.default.svc:20160",
        "status_address": "basic-tikv-0.basic-tikv-peer.default.svc:20180",
        "git_hash": "d3ba0ac2", "start_timestamp": 1717000000, "deploy_path": "/",
        "last_heartbeat": 1717000100123456789, "node_state": 1, "state_name": "Up"},
      "status": {"capacity": "100GiB", "available": "94.5GiB", "used_size": "312.5MiB",
        "leader_count": 34, "leader_weight": 1, "leader_score": 34, "leader_size": 34,
        "region_count": 100, "region_weight": 1, "region_score": 100.5, "region_size": 100,
        "slow_score": 1, "start_ts": "2024-05-29T16:26:40Z",
        "last_heartbeat_ts": "2024-05-29T16:28:20.123456789Z", "uptime": "1m40.123456789s"}
    },
    {
      "store": {"id": 4, "address": "basic-tikv-1.basic-tikv-peer.default.svc:20160", "state": 1,
        "version": "8.5.0", "status_address": "basic-tikv-1.basic-tikv-peer.default.svc:20180",
        "last_heartbeat": 1717000100000000000, "node_state": 2, "state_name": "Offline"},
      "status": {"capacity": "100GiB", "available": "99GiB", "used_size": "0B",
        "leader_count": 0, "leader_weight": 1, "leader_score": 0, "leader_size": 0,
        "region_count": 12, "region_weight": 1, "region_score": 12, "region_size": 12,
        "last_heartbeat_ts": "2024-05-29T16:28:20Z"}
    }
  ]
}
`
	pdTombstoneStoresJSON = `{
  "count": 1,
  "stores": [
    {
      "store": {"id": 7, "address": "basic-tikv-2.basic-tikv-peer.default.svc:20160", "state": 2,
        "version": "8.5.0", "node_state": 3, "state_name": "Tombstone"},
      "status": {"capacity": "0B", "available": "0B", "used_size": "0B", "leader_count": 0,
        "leader_weight": 1, "leader_score": 0, "leader_size": 0, "region_count": 0,
        "region_weight": 1, "region_score": 0, "region_size": 0,
        "last_heartbeat_ts": "2024-05-29T16:00:00Z"}
    }
  ]
}
`
	pdStoreJSON = `{
  "store": {"id": 4, "address": "basic-tikv-1.basic-tikv-peer.default.svc:20160", "state": 1,
    "node_state": 2, "state_name": "Offline"},
  "status": {"capacity": "100GiB", "available": "99GiB", "used_size": "0B", "leader_count": 0,
    "leader_weight": 1, "leader_score": 0, "leader_size": 0, "region_count": 12,
    "region_weight": 1, "region_score": 12, "region_size": 12}
}
`
	// pdConfigJSON is a real GET /pd/api/v1/config with most sections cut short; the unknown
	// sections and fields must be ignored.
	pdConfigJSON = `{
  "client-urls": "http://0.0.0.0:2379",
  "peer-urls": "http://0.0.0.0:2380",
  "advertise-client-urls": "http://basic-pd-0.basic-pd-peer.default.svc:2379",
  "advertise-peer-urls": "http://basic-pd-0.basic-pd-peer.default.svc:2380",
  "name": "basic-pd-0",
  "data-dir": "/var/lib/pd",
  "force-new-cluster": false,
  "enable-grpc-gateway": true,
  "initial-cluster": "basic-pd-0=http://basic-pd-0.basic-pd-peer.default.svc:2380",
  "initial-cluster-state": "new",
  "join": "",
  "lease": 5,
  "log": {"level": "info", "format": "text", "file": {"filename": "", "max-size": 0}},
  "tso-save-interval": "3s",
  "metric": {"job": "basic-pd-0", "address": "", "interval": "15s"},
  "schedule": {
    "max-snapshot-count": 64, "max-pending-peer-count": 64, "max-merge-region-size": 54,
    "max-merge-region-keys": 540000, "split-merge-interval": "1h0m0s", "swtich-witness-interval": "1h0m0s",
    "enable-one-way-merge": "false", "patrol-region-interval": "10ms", "max-store-down-time": "30m0s",
    "max-store-preparing-time": "48h0m0s", "leader-schedule-limit": 4, "leader-schedule-policy": "count",
    "region-schedule-limit": 2048, "replica-schedule-limit": 64, "merge-schedule-limit": 8,
    "hot-region-schedule-limit": 4, "hot-region-cache-hits-threshold": 3,
    "store-limit": {"1": {"add-peer": 15, "remove-peer": 15}},
    "tolerant-size-ratio": 0, "low-space-ratio": 0.8, "high-space-ratio": 0.7,
    "enable-joint-consensus": "true", "store-limit-version": "v1"
  },
  "replication": {
    "max-replicas": 3,
    "location-labels": "zone,host",
    "strictly-match-label": "false",
    "enable-placement-rules": "true",
    "enable-placement-rules-cache": "false",
    "isolation-level": ""
  },
  "pd-server": {
    "use-region-storage": "true", "max-gap-reset-ts": "24h0m0s", "key-type": "table",
    "runtime-services": "", "metric-storage": "", "dashboard-address": "auto",
    "trace-region-flow": "true", "flow-round-by-digit": 3, "min-resolved-ts-persistence-interval": "1s",
    "server-memory-limit": 0, "enable-gogc-tuner": "false"
  },
  "cluster-version": "8.5.0",
  "labels": {},
  "quota-backend-bytes": "8GiB",
  "auto-compaction-mode": "periodic",
  "auto-compaction-retention-v2": "1h",
  "security": {"cacert-path": "", "cert-path": "", "key-path": "", "redact-info-log": false},
  "label-property": {},
  "replication-mode": {"replication-mode": "majority"},
  "dashboard": {"enable-telemetry": false},
  "keyspace": {"pre-alloc": null},
  "controller": {"degraded-mode-wait-duration": "0s"}
}
`
	pdSchedulersJSON = `[
  "balance-hot-region-scheduler",
  "balance-leader-scheduler",
  "balance-region-scheduler",
  "evict-slow-store-scheduler",
  "evict-leader-scheduler-4",
  "evict-leader-scheduler-1"
]
`
	pdSchedulersCombinedJSON = `[
  "balance-leader-scheduler",
  "balance-region-scheduler",
  "evict-leader-scheduler"
]
`
	pdEvictLeaderListJSON = `{
  "store-id-ranges": {
    "9": [{"start-key": "", "end-key": ""}],
    "2": [{"start-key": "", "end-key": ""}]
  },
  "batch": 3
}
`
	pdNotBootstrappedJSON = `"[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first"
`
	pdStoreNotFoundJSON      = `"[PD:core:ErrStoreNotFound]store 42 not found"` + "\n"
	pdSchedulerExistedJSON   = `"[PD:scheduler:ErrSchedulerExisted]scheduler existed"` + "\n"
	pdSchedulerNotFoundJSON  = `"[PD:scheduler:ErrSchedulerNotFound]scheduler not found"` + "\n"
	pdInvalidInputJSON       = `{"code": "input", "msg": "json: cannot unmarshal string into Go value of type uint64", "data": {}}` + "\n"
	pdEtcdMemberNotFoundJSON = `"etcdserver: member not found"` + "\n"
)

// answer is what the stub answers for one "METHOD /path?query".
type answer struct {
	status int
	body   string
}

// request is one request the stub received.
type request struct {
	Method, URI, Body string
}

// stubPD is an httptest PD that answers from a table and records requests; unknown routes get 404
// with Go's plain-text body, as a PD too old for the route would.
type stubPD struct {
	*httptest.Server
	mu       sync.Mutex
	answers  map[string]answer
	requests []request
}

func newStubPD(t *testing.T, answers map[string]answer) *stubPD {
	t.Helper()
	s := &stubPD{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *stubPD) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := r.Method + " " + r.URL.RequestURI()
	s.mu.Lock()
	s.requests = append(s.requests, request{Method: r.Method, URI: r.URL.RequestURI(), Body: string(body)})
	a, ok := s.answers[key]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

// received returns the requests so far.
func (s *stubPD) received() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.requests...)
}

// client returns a real client of the stub.
func (s *stubPD) client() pdapi.Client {
	return pdapi.NewClient(s.URL, 5*time.Second, nil)
}

func ok(body string) answer { return answer{status: http.StatusOK, body: body} }
