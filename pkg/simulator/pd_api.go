package simulator

import (
	"net/http"
	"strconv"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// pdNeed is what a PD handler needs before it runs.
type pdNeed int

const (
	// needNothing: served by the member itself (e.g. /pd/api/v2/ready).
	needNothing pdNeed = iota
	// needLeader: forwarded to the leader; 503 without one, as PD's redirector.
	needLeader
	// needBootstrap: needs the Raft cluster, i.e. a TiKV store has registered; 500 before, as PD's
	// cluster middleware.
	needBootstrap
)

const (
	msgLeaderNil       = "[PD:server:ErrLeaderNil]leader is nil"
	msgNotBootstrapped = "[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first"
	// simGitHash is reported as every component's git hash.
	simGitHash = "0000000000000000000000000000000000000000"
)

type pdHandler func(w http.ResponseWriter, r *http.Request, st *reqState)

// pdRoutes registers the PD endpoints the operator uses (spec §5) plus a few neighbours.
func (s *Server) pdRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	route := func(pattern string, need pdNeed, h pdHandler) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			st := stateOf(r)
			switch {
			case need >= needLeader && !st.c.pdAvailable():
				writeJSON(w, http.StatusServiceUnavailable, msgLeaderNil)
			case need >= needBootstrap && !st.c.bootstrapped:
				writeJSON(w, http.StatusInternalServerError, msgNotBootstrapped)
			default:
				h(w, r, st)
			}
		})
	}
	route("GET /pd/api/v1/ping", needNothing, func(http.ResponseWriter, *http.Request, *reqState) {})
	route("GET /pd/api/v2/ready", needNothing, handleReady)
	route("GET /pd/api/v1/health", needLeader, handleHealth)
	route("GET /pd/health", needLeader, handleHealth)
	route("GET /pd/api/v1/cluster", needLeader, handleCluster)
	route("GET /pd/api/v1/cluster/status", needLeader, handleClusterStatus)
	route("GET /pd/api/v1/leader", needLeader, handleLeader)
	route("POST /pd/api/v1/leader/transfer/{name}", needLeader, handleTransferLeader)
	route("GET /pd/api/v1/members", needLeader, handleMembers)
	route("DELETE /pd/api/v1/members/name/{name}", needLeader, handleDeleteMemberByName)
	route("DELETE /pd/api/v1/members/id/{id}", needLeader, handleDeleteMemberByID)
	route("GET /pd/api/v1/config", needLeader, handleConfig)
	route("GET /pd/api/v1/config/replicate", needLeader, handleGetReplicate)
	route("POST /pd/api/v1/config/replicate", needLeader, handleSetReplicate) // decodes before it needs bootstrap
	route("GET /pd/api/v1/config/rules/group/{group}", needBootstrap, handlePlacementRulesGroup)
	route("GET /pd/api/v1/admin/cluster/markers/snapshot-recovering", needLeader, handleSnapshotRecovering)
	route("GET /pd/api/v1/stores", needBootstrap, handleStores)
	route("GET /pd/api/v1/store/{id}", needBootstrap, handleGetStore)
	route("DELETE /pd/api/v1/store/{id}", needBootstrap, handleDeleteStore)
	route("POST /pd/api/v1/store/{id}/state", needBootstrap, handleSetStoreState)
	route("POST /pd/api/v1/store/{id}/label", needBootstrap, handleSetStoreLabels)
	route("GET /pd/api/v1/schedulers", needBootstrap, handleSchedulers)
	route("POST /pd/api/v1/schedulers", needBootstrap, handleAddScheduler)
	route("DELETE /pd/api/v1/schedulers/{name}", needBootstrap, handleRemoveScheduler)
	route("GET /pd/api/v1/scheduler-config/evict-leader-scheduler/list", needLeader, handleEvictLeaderConfig)
	route("GET /pd/api/v2/ms/members/{service}", needLeader, handlePDMSMembers)
	route("GET /pd/api/v2/ms/primary/{service}", needLeader, handlePDMSPrimary)
	pdClusterRoutes(route)
	return mux
}

// memberJSON renders m as pdpb.Member.
func (c *Cluster) memberJSON(m *pdMember) *pdapi.Member {
	return &pdapi.Member{
		Name: m.name, MemberID: m.id, PeerUrls: []string{c.peerURL(m)}, ClientUrls: []string{c.clientURL(m)},
		DeployPath: "/", BinaryVersion: m.version, GitHash: simGitHash,
	}
}

func handleHealth(w http.ResponseWriter, _ *http.Request, st *reqState) {
	out := pdapi.HealthInfo{}
	for _, m := range st.c.sortedMembers() {
		out = append(out, pdapi.MemberHealth{
			Name: m.name, MemberID: m.id, ClientUrls: []string{st.c.clientURL(m)}, Health: st.c.memberHealthy(m),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

func handleCluster(w http.ResponseWriter, _ *http.Request, st *reqState) {
	writeJSON(w, http.StatusOK, pdapi.Cluster{ID: st.c.id, MaxPeerCount: st.c.maxPeerCount()})
}

// clusterStatus is the body of `GET /pd/api/v1/cluster/status`; PD renders replication_status even when
// empty (no DR auto-sync).
type clusterStatus struct {
	RaftBootstrapTime time.Time `json:"raft_bootstrap_time"`
	IsInitialized     bool      `json:"is_initialized"`
	ReplicationStatus string    `json:"replication_status"`
}

func handleClusterStatus(w http.ResponseWriter, _ *http.Request, st *reqState) {
	initialized := st.c.bootstrapped && st.c.upStores(ComponentTiKV) >= st.c.maxReplicas()
	writeJSON(w, http.StatusOK, clusterStatus{RaftBootstrapTime: st.c.bootstrapAt, IsInitialized: initialized})
}

// leaderJSON is the body of `GET /pd/api/v1/leader`: PD renders only these fields of the member.
type leaderJSON struct {
	Name       string   `json:"name"`
	MemberID   uint64   `json:"member_id"`
	PeerUrls   []string `json:"peer_urls"`
	ClientUrls []string `json:"client_urls"`
}

func handleLeader(w http.ResponseWriter, _ *http.Request, st *reqState) {
	m := st.c.members[st.c.leader]
	writeJSON(w, http.StatusOK, leaderJSON{
		Name: m.name, MemberID: m.id, PeerUrls: []string{st.c.peerURL(m)}, ClientUrls: []string{st.c.clientURL(m)},
	})
}

func handleMembers(w http.ResponseWriter, _ *http.Request, st *reqState) {
	leader := st.c.memberJSON(st.c.members[st.c.leader])
	info := pdapi.MembersInfo{Header: &pdapi.ResponseHeader{ClusterID: st.c.id}, Leader: leader, EtcdLeader: leader}
	for _, m := range st.c.sortedMembers() {
		info.Members = append(info.Members, st.c.memberJSON(m))
	}
	writeJSON(w, http.StatusOK, info)
}

func handleTransferLeader(w http.ResponseWriter, r *http.Request, st *reqState) {
	if err := st.c.transferLeader(r.PathValue("name")); err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, "The transfer command is submitted.")
}

func handleDeleteMemberByName(w http.ResponseWriter, r *http.Request, st *reqState) {
	name := r.PathValue("name")
	if err := st.c.deleteMemberByName(name); err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, "removed, pd: "+name)
}

func handleDeleteMemberByID(w http.ResponseWriter, r *http.Request, st *reqState) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := st.c.deleteMemberByID(id); err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, "removed, pd: "+strconv.FormatUint(id, 10))
}

func handleConfig(w http.ResponseWriter, _ *http.Request, st *reqState) {
	c, t := st.c, st.c.timings()
	m := c.members[st.t.pod]
	cfg := pdapi.Config{
		ClientUrls: "http://0.0.0.0:2379", PeerUrls: "http://0.0.0.0:2380",
		Name: st.t.pod, DataDir: "/var/lib/pd", InitialClusterState: "new", LeaderLease: 3,
		Schedule: pdapi.ScheduleConfig{
			MaxSnapshotCount: 64, MaxPendingPeerCount: 64, MaxMergeRegionSize: 54, MaxMergeRegionKeys: 540000,
			SplitMergeInterval: pdapi.NewDuration(3600e9), PatrolRegionInterval: pdapi.NewDuration(10e6),
			MaxStoreDownTime: pdapi.NewDuration(t.MaxStoreDownTime), MaxStorePreparingTime: pdapi.NewDuration(48 * 3600e9),
			LeaderScheduleLimit: 4, LeaderSchedulePolicy: "count", RegionScheduleLimit: 2048,
			ReplicaScheduleLimit: 64, MergeScheduleLimit: 8, HotRegionScheduleLimit: 4,
		},
		Replication: c.replication,
		PDServerCfg: pdapi.PDServerConfig{
			UseRegionStorage: true, MaxGapResetTS: pdapi.NewDuration(24 * 3600e9), KeyType: "table", DashboardAddress: "auto",
		},
	}
	if m != nil {
		cfg.AdvertiseClientUrls, cfg.AdvertisePeerUrls, cfg.ClusterVersion = c.clientURL(m), c.peerURL(m), m.version
		cfg.InitialCluster = m.name + "=" + c.peerURL(m)
	}
	writeJSON(w, http.StatusOK, cfg)
}

func handleGetReplicate(w http.ResponseWriter, _ *http.Request, st *reqState) {
	writeJSON(w, http.StatusOK, st.c.replication)
}

// handleSetReplicate decodes the body over the current replication config, as PD does: a partial object
// changes only what it names, and booleans must be JSON strings (an unquoted one is PD's 500 errcode
// "internal"). Like PD v8.5, any write needs the Raft cluster (500 ErrNotBootstrapped before the first
// TiKV, whatever the body names), and disabling placement rules is refused (500) while a TiFlash store
// that is not Tombstone exists.
func handleSetReplicate(w http.ResponseWriter, r *http.Request, st *reqState) {
	cfg := st.c.replication
	cfg.LocationLabels = append(pdapi.StringSlice{}, cfg.LocationLabels...)
	if err := readJSON(r, &cfg); err != nil {
		writeDecodeError(w, err)
		return
	}
	if !st.c.bootstrapped {
		writeJSON(w, http.StatusInternalServerError, msgNotBootstrapped)
		return
	}
	isolationOK := cfg.IsolationLevel == ""
	for _, l := range cfg.LocationLabels {
		isolationOK = isolationOK || l == cfg.IsolationLevel
	}
	if !isolationOK {
		writeJSON(w, http.StatusInternalServerError, "isolation-level must be one of location-labels or empty")
		return
	}
	if !cfg.EnablePlacementRules && st.c.replication.EnablePlacementRules && st.c.hasTiFlashStores() {
		writeJSON(w, http.StatusInternalServerError, "cannot disable placement rules with TiFlash nodes")
		return
	}
	st.c.replication, st.c.replicationPersisted = cfg, true
	st.c.log.Info("replication config changed", "maxReplicas", cfg.MaxReplicas, "placementRules", cfg.EnablePlacementRules)
	writeJSON(w, http.StatusOK, "The config is updated.")
}

func handleSnapshotRecovering(w http.ResponseWriter, _ *http.Request, _ *reqState) {
	writeJSON(w, http.StatusOK, map[string]bool{"marked": false})
}
