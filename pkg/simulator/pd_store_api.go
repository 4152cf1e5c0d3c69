package simulator

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Simulated store capacity: every store reports the same disk.
const (
	storeCapacity   = pdapi.ByteSize(100 << 30)
	storeRegionSize = pdapi.ByteSize(1 << 20)
)

// storeInfo renders s as PD's response.StoreInfo at now.
func (c *Cluster) storeInfo(s *store, now time.Time) *pdapi.StoreInfo {
	nodeState := map[pdapi.StoreState]pdapi.NodeState{
		pdapi.StoreStateUp: pdapi.NodeStateServing, pdapi.StoreStateOffline: pdapi.NodeStateRemoving,
		pdapi.StoreStateTombstone: pdapi.NodeStateRemoved,
	}[s.state]
	// TiKV reports its version without the "v" and deploys in "/"; TiFlash keeps the "v" and runs in
	// "/tiflash" (as a real PD lists both on Kubernetes).
	version, deployPath := trimV(s.version), "/"
	if s.comp == ComponentTiFlash {
		version, deployPath = s.version, "/tiflash"
	}
	meta := &pdapi.MetaStore{
		ID: s.id, Address: c.storeAddress(s), State: s.state, Version: version, PeerAddress: c.storePeerAddress(s),
		StatusAddress: c.storeStatusAddress(s), GitHash: simGitHash, StartTimestamp: s.startTime.Unix(), DeployPath: deployPath,
		LastHeartbeat: s.lastHeartbeat.UnixNano(), PhysicallyDestroyed: s.physicallyDestroyed, NodeState: nodeState,
		StateName: c.stateName(s, now),
	}
	keys := make([]string, 0, len(s.labels))
	for k := range s.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		meta.Labels = append(meta.Labels, &pdapi.StoreLabel{Key: k, Value: s.labels[k]})
	}
	regions := c.regionsOf(s)
	used := storeRegionSize * pdapi.ByteSize(uint32(min(max(regions, 0), math.MaxUint16)))
	start, heartbeat := s.startTime.UTC(), s.lastHeartbeat.UTC()
	uptime := pdapi.NewDuration(heartbeat.Sub(start))
	status := &pdapi.StoreStatus{
		Capacity: storeCapacity, Available: storeCapacity - used, UsedSize: used,
		LeaderCount: s.leaders, LeaderWeight: 1, LeaderScore: float64(s.leaders), LeaderSize: int64(s.leaders),
		RegionCount: regions, RegionWeight: 1, RegionScore: float64(regions), RegionSize: int64(regions),
		StartTS: &start, LastHeartbeatTS: &heartbeat,
	}
	if uptime.Duration > 0 {
		status.Uptime = &uptime
	}
	if c.storeLive(s) {
		status.SlowScore = 1
		status.SlowTrend = &pdapi.SlowTrend{}
	}
	return &pdapi.StoreInfo{Store: meta, Status: status}
}

func trimV(version string) string {
	if len(version) > 1 && version[0] == 'v' {
		return version[1:]
	}
	return version
}

// handleStores is `GET /pd/api/v1/stores[?state=N…]`: Up and Offline stores by default. Like PD it
// answers 500 for a state that is not a number or not 0, 1 or 2.
func handleStores(w http.ResponseWriter, r *http.Request, st *reqState) {
	accept := map[pdapi.StoreState]bool{pdapi.StoreStateUp: true, pdapi.StoreStateOffline: true}
	if values, ok := r.URL.Query()["state"]; ok {
		accept = map[pdapi.StoreState]bool{}
		for _, v := range values {
			n, err := strconv.Atoi(v)
			if err != nil {
				writeJSON(w, http.StatusInternalServerError, err.Error())
				return
			}
			if n < int(pdapi.StoreStateUp) || n > int(pdapi.StoreStateTombstone) {
				writeJSON(w, http.StatusInternalServerError, fmt.Sprintf("unknown StoreState: %d", n))
				return
			}
			accept[pdapi.StoreState(n)] = true
		}
	}
	out := pdapi.StoresInfo{Stores: []*pdapi.StoreInfo{}}
	for _, s := range st.c.sortedStores() {
		if accept[s.state] {
			out.Stores = append(out.Stores, st.c.storeInfo(s, st.now))
		}
	}
	out.Count = len(out.Stores)
	writeJSON(w, http.StatusOK, out)
}

// storeIDParam parses the {id} path value; on error it has answered 400 as PD does.
func storeIDParam(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		writeInvalidInput(w, err)
		return 0, false
	}
	return id, true
}

func handleGetStore(w http.ResponseWriter, r *http.Request, st *reqState) {
	id, ok := storeIDParam(w, r)
	if !ok {
		return
	}
	s, found := st.c.stores[id]
	if !found {
		writeJSON(w, http.StatusNotFound, storeNotFound(id))
		return
	}
	writeJSON(w, http.StatusOK, st.c.storeInfo(s, st.now))
}

func handleDeleteStore(w http.ResponseWriter, r *http.Request, st *reqState) {
	id, ok := storeIDParam(w, r)
	if !ok {
		return
	}
	_, force := r.URL.Query()["force"]
	if err := st.c.deleteStore(id, force); err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, "The store is set as Offline.")
}

func handleSetStoreState(w http.ResponseWriter, r *http.Request, st *reqState) {
	id, ok := storeIDParam(w, r)
	if !ok {
		return
	}
	if err := st.c.setStoreState(id, r.URL.Query().Get("state")); err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, "The store's state is updated.")
}

func handleSetStoreLabels(w http.ResponseWriter, r *http.Request, st *reqState) {
	id, ok := storeIDParam(w, r)
	if !ok {
		return
	}
	var labels map[string]string
	if err := readJSON(r, &labels); err != nil {
		writeInvalidInput(w, err)
		return
	}
	if err := validateStoreLabels(labels); err != nil {
		writeInvalidInput(w, err)
		return
	}
	if err := st.c.setStoreLabels(id, labels); err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, "The store's label is updated.")
}

func handleSchedulers(w http.ResponseWriter, _ *http.Request, st *reqState) {
	writeJSON(w, http.StatusOK, st.c.schedulerNames())
}

// handleAddScheduler is `POST /pd/api/v1/schedulers` with PD's checks of the body.
func handleAddScheduler(w http.ResponseWriter, r *http.Request, st *reqState) {
	var input map[string]any
	if err := readJSON(r, &input); err != nil {
		writeInvalidInput(w, err)
		return
	}
	name, ok := input["name"].(string)
	if !ok {
		writeJSON(w, http.StatusBadRequest, "missing scheduler name")
		return
	}
	answer, err := msgSchedulerCreated, (*pdError)(nil)
	if name == evictLeaderPrefix {
		storeID, ok := input["store_id"].(float64)
		if !ok || storeID < 0 || storeID != float64(uint64(storeID)) {
			writeJSON(w, http.StatusBadRequest, "missing store id")
			return
		}
		answer, err = st.c.addEvictLeader(uint64(storeID))
	} else {
		err = st.c.addScheduler(name)
	}
	if err != nil {
		writePDError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// handleRemoveScheduler is `DELETE /pd/api/v1/schedulers/{name}`; an error without a message is PD's
// `null` body.
func handleRemoveScheduler(w http.ResponseWriter, r *http.Request, st *reqState) {
	body, err := st.c.removeScheduler(r.PathValue("name"))
	switch {
	case err != nil && err.msg == "":
		writeJSON(w, err.status, nil)
	case err != nil:
		writePDError(w, err)
	default:
		writeJSON(w, http.StatusOK, body)
	}
}

// handleEvictLeaderConfig answers the scheduler-config list of newer PDs, which keep all evicted stores in
// one evict-leader-scheduler.
func handleEvictLeaderConfig(w http.ResponseWriter, _ *http.Request, st *reqState) {
	if !st.c.bootstrapped {
		writeJSON(w, http.StatusNotAcceptable, msgNotBootstrapped)
		return
	}
	ids := st.c.evictedStoreIDs()
	if len(ids) == 0 {
		writeText(w, http.StatusNotFound, msgPageNotFound)
		return
	}
	cfg := pdapi.EvictLeaderSchedulerConfig{StoreIDRanges: map[string][]pdapi.KeyRange{}, Batch: 3}
	for _, id := range ids {
		cfg.StoreIDRanges[strconv.FormatUint(id, 10)] = []pdapi.KeyRange{{}}
	}
	writeJSON(w, http.StatusOK, cfg)
}
