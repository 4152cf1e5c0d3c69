package simulator

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// tidbStatus is the body of TiDB's `GET /status`.
type tidbStatus struct {
	Connections int    `json:"connections"`
	Version     string `json:"version"`
	GitHash     string `json:"git_hash"`
}

// tidbInfo is the body of TiDB's `GET|POST /info` (the fields of infosync.ServerInfo the operator reads,
// plus the usual neighbours).
type tidbInfo struct {
	IsOwner        bool              `json:"is_owner"`
	MaxProcs       int               `json:"max_procs"`
	GOGC           int               `json:"gogc"`
	Version        string            `json:"version"`
	GitHash        string            `json:"git_hash"`
	DDLID          string            `json:"ddl_id"`
	IP             string            `json:"ip"`
	ListeningPort  uint              `json:"listening_port"`
	StatusPort     uint              `json:"status_port"`
	Lease          string            `json:"lease"`
	BinlogStatus   string            `json:"binlog_status"`
	StartTimestamp int64             `json:"start_timestamp"`
	Labels         map[string]string `json:"labels"`
	ServerID       uint64            `json:"server_id"`
}

// tidbRoutes registers TiDB's status port (10080) endpoints.
func (s *Server) tidbRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { handleTiDBStatus(w, stateOf(r)) })
	mux.HandleFunc("GET /info", func(w http.ResponseWriter, r *http.Request) { handleTiDBInfo(w, stateOf(r)) })
	mux.HandleFunc("POST /info", func(w http.ResponseWriter, r *http.Request) { handleTiDBInfo(w, stateOf(r)) })
	mux.HandleFunc("POST /labels", func(w http.ResponseWriter, r *http.Request) { handleTiDBSetLabels(w, r, stateOf(r)) })
	mux.HandleFunc("/upgrade/{op}", func(w http.ResponseWriter, r *http.Request) { handleTiDBUpgrade(w, r, stateOf(r)) })
	return mux
}

// tikvRoutes registers TiKV's status port (20180) endpoints.
func (s *Server) tikvRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) { handleTiKVMetrics(w, stateOf(r)) })
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return mux
}

// tidbVersion is TiDB's MySQL-compatible version string for a component version.
func tidbVersion(version string) string { return "8.0.11-TiDB-" + version }

// tidbStorageReachable reports whether a TiDB server can reach its storage: PD has a leader and a TiKV
// store is Up (a TiFlash store holds no data TiDB can start from). Statements and the smooth-upgrade API
// need it; `GET /status` does not.
func (c *Cluster) tidbStorageReachable() (bool, string) {
	if !c.pdAvailable() {
		return false, "PD has no leader"
	}
	for _, s := range c.stores {
		if s.comp == ComponentTiKV && s.state == pdapi.StoreStateUp && c.storeLive(s) {
			return true, ""
		}
	}
	return false, "no TiKV store is Up"
}

// tidbServing reports whether the TiDB server of pod answers `GET /status` with 200: a real TiDB does so
// while it serves, whatever PD or TiKV do, so only its pod (Running and Ready) and an admin mark count.
func (c *Cluster) tidbServing(pod string) bool {
	p, ok := c.pods[pod]
	return ok && p.Component == ComponentTiDB && p.Running && p.Ready && !c.tidbUnhealthy[pod]
}

func handleTiDBStatus(w http.ResponseWriter, st *reqState) {
	if !st.c.tidbServing(st.t.pod) {
		writeText(w, http.StatusInternalServerError, "simulated TiDB is not serving\n")
		return
	}
	writeJSON(w, http.StatusOK, tidbStatus{Version: tidbVersion(st.c.version(st.c.pods[st.t.pod])), GitHash: simGitHash})
}

// tidbOwner is the DDL owner: the first Ready TiDB server by name.
func (c *Cluster) tidbOwner() string {
	for _, p := range c.podsOf(ComponentTiDB) {
		if p.Running && p.Ready {
			return p.Name
		}
	}
	return ""
}

func handleTiDBInfo(w http.ResponseWriter, st *reqState) {
	p := st.c.pods[st.t.pod]
	writeJSON(w, http.StatusOK, tidbInfo{
		IsOwner: st.c.tidbOwner() == p.Name, MaxProcs: 4, GOGC: 100, Version: tidbVersion(st.c.version(p)),
		GitHash: simGitHash, DDLID: fmt.Sprintf("%016x", stableID("tidb", st.c.key.String(), p.Name)),
		IP: st.c.podHost(p.Name, ComponentTiDB), ListeningPort: 4000, StatusPort: 10080, Lease: "45s",
		BinlogStatus: "Off", StartTimestamp: st.c.bootstrapAt.Unix(), Labels: st.c.tidbLabelsOf(p),
	})
}

// handleTiKVMetrics renders the store's region gauges in the Prometheus text format; a pod without a
// store (not registered yet, or Tombstone under a new identity) reports zeros.
func handleTiKVMetrics(w http.ResponseWriter, st *reqState) {
	leaders, regions := 0, 0
	if p, ok := st.c.pods[st.t.pod]; ok {
		if s := st.c.storeByIdentity(identity{pod: p.Name, pvcUID: p.PVCUID}); s != nil {
			leaders, regions = s.leaders, st.c.regionsOf(s)
		}
	}
	var b strings.Builder
	b.WriteString("# HELP tikv_raftstore_region_count Number of regions collected in region_collector\n")
	b.WriteString("# TYPE tikv_raftstore_region_count gauge\n")
	fmt.Fprintf(&b, "tikv_raftstore_region_count{type=\"leader\"} %d\n", leaders)
	fmt.Fprintf(&b, "tikv_raftstore_region_count{type=\"region\"} %d\n", regions)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(b.String()))
}
