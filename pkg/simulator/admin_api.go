package simulator

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// adminRoutes registers the admin API; see docs/simulator.md for the table of endpoints.
func (s *Server) adminRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	const cluster = api.PathPrefix + "/clusters/{namespace}/{name}"
	mux.HandleFunc("GET "+api.PathPrefix+"/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok\n")
	})
	mux.HandleFunc("GET "+api.PathPrefix+"/clusters", s.handleListClusters)
	mux.HandleFunc("GET "+cluster, s.handleGetCluster)
	mux.HandleFunc("PUT "+cluster+"/config", s.handleSetClusterConfig)
	mux.HandleFunc("PUT "+cluster+"/timings", s.handleSetClusterTimings)
	mux.HandleFunc("PUT "+cluster+"/members/{member}/unhealthy", s.memberHealthHandler(true))
	mux.HandleFunc("DELETE "+cluster+"/members/{member}/unhealthy", s.memberHealthHandler(false))
	mux.HandleFunc("PUT "+cluster+"/stores/{id}/down", s.storeDownHandler(true))
	mux.HandleFunc("DELETE "+cluster+"/stores/{id}/down", s.storeDownHandler(false))
	mux.HandleFunc("PUT "+cluster+"/captures/{pod}/unhealthy", s.podHealthHandler(ComponentTiCDC, true))
	mux.HandleFunc("DELETE "+cluster+"/captures/{pod}/unhealthy", s.podHealthHandler(ComponentTiCDC, false))
	mux.HandleFunc("PUT "+cluster+"/tiproxy-servers/{pod}/unhealthy", s.podHealthHandler(ComponentTiProxy, true))
	mux.HandleFunc("DELETE "+cluster+"/tiproxy-servers/{pod}/unhealthy", s.podHealthHandler(ComponentTiProxy, false))
	mux.HandleFunc("PUT "+cluster+"/tidb-servers/{pod}/unhealthy", s.podHealthHandler(ComponentTiDB, true))
	mux.HandleFunc("DELETE "+cluster+"/tidb-servers/{pod}/unhealthy", s.podHealthHandler(ComponentTiDB, false))
	mux.HandleFunc("PUT "+cluster+"/pump-nodes/{nodeID}/state", s.handleSetPumpNodeState)
	mux.HandleFunc("PUT "+cluster+"/pd-unreachable", s.pdUnreachableHandler(true))
	mux.HandleFunc("DELETE "+cluster+"/pd-unreachable", s.pdUnreachableHandler(false))
	mux.HandleFunc("GET "+cluster+"/tiflash-replicas", s.handleListTiFlashReplicas)
	mux.HandleFunc("PUT "+cluster+"/tiflash-replicas/{tableID}", s.handleSetTiFlashReplicas)
	mux.HandleFunc("GET "+cluster+"/faults", s.handleListFaults)
	mux.HandleFunc("POST "+cluster+"/faults", s.handleAddFault)
	mux.HandleFunc("DELETE "+cluster+"/faults", s.handleClearFaults)
	mux.HandleFunc("DELETE "+cluster+"/faults/{id}", s.handleDeleteFault)
	mux.HandleFunc("GET "+api.PathPrefix+"/timings", s.handleGetTimings)
	mux.HandleFunc("PUT "+api.PathPrefix+"/timings", s.handleSetTimings)
	s.dmAdminRoutes(mux)
	return mux
}

func adminError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, api.Error{Error: fmt.Sprintf(format, args...)})
}

func keyOf(r *http.Request) ClusterKey {
	return ClusterKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
}

// onCluster runs fn on the cluster of the request, answering 404 when it is unknown (unless create).
func (s *Server) onCluster(w http.ResponseWriter, r *http.Request, create bool, fn func(c *Cluster)) bool {
	if s.reg.withCluster(keyOf(r), create, fn) {
		return true
	}
	adminError(w, http.StatusNotFound, "no simulated cluster %s", keyOf(r))
	return false
}

func (s *Server) handleListClusters(w http.ResponseWriter, _ *http.Request) {
	out := []api.ClusterSummary{}
	for _, key := range s.reg.keys() {
		s.reg.withCluster(key, false, func(c *Cluster) {
			out = append(out, api.ClusterSummary{
				Namespace: key.Namespace, Name: key.Name, ClusterID: c.id, Bootstrapped: c.bootstrapped,
				Leader: c.leader, PDMembers: len(c.members), Stores: len(c.stores), TiDBServers: len(c.podsOf(ComponentTiDB)),
				TiCDCCaptures: len(c.captures), TiProxyServers: len(c.podsOf(ComponentTiProxy)), PumpNodes: len(c.pumpNodes),
			})
		})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGetCluster(w http.ResponseWriter, r *http.Request) {
	var state api.ClusterState
	if s.onCluster(w, r, false, func(c *Cluster) { state = c.snapshot(s.reg.clock.Now()) }) {
		writeJSON(w, http.StatusOK, state)
	}
}

// snapshot renders the whole cluster for the admin API.
func (c *Cluster) snapshot(now time.Time) api.ClusterState {
	st := api.ClusterState{
		Namespace: c.key.Namespace, Name: c.key.Name, ClusterID: c.id, Bootstrapped: c.bootstrapped,
		PDUnreachable: c.pdUnreachable, Leader: c.leader, Members: []api.Member{}, Stores: []api.Store{},
		TiDBServers: []api.TiDBServer{}, Schedulers: c.schedulerNames(), Faults: c.faultList(),
		TiFlashReplicas: c.tiflashReplicaList(), Captures: c.captureList(), TiProxyServers: c.tiproxyList(),
		PumpNodes: c.pumpList(), LeaderChanges: c.leaderChangeList(), TLS: c.tlsSnapshot(),
		Config: api.ClusterConfig{
			MaxReplicas: c.replication.MaxReplicas, RegionCount: c.regionCount,
			LocationLabels: append([]string{}, c.replication.LocationLabels...), EnablePlacementRules: c.replication.EnablePlacementRules,
			TiCDCTables: c.ticdcTables,
		},
	}
	for _, m := range c.sortedMembers() {
		p, ok := c.podWithIdentity(m.ident)
		st.Members = append(st.Members, api.Member{
			Name: m.name, MemberID: m.id, ClientURL: c.clientURL(m), PodReady: ok && p.Ready, Healthy: c.memberHealthy(m),
			ForcedUnhealthy: m.forcedUnhealthy, Leader: m.name == c.leader,
			StartedAt: timePtr(m.startedAt), ReadySince: timePtr(m.readySince),
		})
	}
	for _, s := range c.sortedStores() {
		labels := map[string]string{}
		for k, v := range s.labels {
			labels[k] = v
		}
		st.Stores = append(st.Stores, api.Store{
			ID: s.id, PodName: s.ident.pod, Engine: string(s.comp), Address: c.storeAddress(s), StateName: c.stateName(s, now), LeaderCount: s.leaders,
			RegionCount: c.regionsOf(s), ForcedDown: s.forcedDown, Evicting: c.evicting[s.id], Labels: labels,
			LabelWrites: s.labelWrites, LostLeaders: s.lostLeaders,
		})
	}
	owner := c.tidbOwner()
	for _, p := range c.podsOf(ComponentTiDB) {
		ready := p.Running && p.Ready
		st.TiDBServers = append(st.TiDBServers, api.TiDBServer{Name: p.Name, Ready: ready, Healthy: c.tidbServing(p.Name), Owner: p.Name == owner,
			Labels: c.tidbLabelsOf(p), LabelWrites: c.tidbLabelWrites[p.Name]})
	}
	st.TiDBUpgrade = c.tidbUpgradeState()
	return st
}

func (s *Server) handleSetClusterConfig(w http.ResponseWriter, r *http.Request) {
	var upd api.ClusterConfigUpdate
	if err := readJSON(r, &upd); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if upd.RegionCount != nil && *upd.RegionCount < 0 {
		adminError(w, http.StatusBadRequest, "regionCount must not be negative, got %d", *upd.RegionCount)
		return
	}
	if upd.TiCDCTables != nil && *upd.TiCDCTables < 0 {
		adminError(w, http.StatusBadRequest, "ticdcTables must not be negative, got %d", *upd.TiCDCTables)
		return
	}
	var state api.ClusterState
	s.onCluster(w, r, true, func(c *Cluster) {
		if upd.MaxReplicas != nil {
			c.replication.MaxReplicas, c.replicationPersisted = *upd.MaxReplicas, true
		}
		if upd.RegionCount != nil {
			c.regionCount = *upd.RegionCount
		}
		if upd.TiCDCTables != nil {
			c.ticdcTables = *upd.TiCDCTables
		}
		c.advanceBy(s.reg.clock.Now(), 0)
		state = c.snapshot(s.reg.clock.Now())
	})
	writeJSON(w, http.StatusOK, state.Config)
}

// memberHealthHandler marks a member unhealthy (or clears the mark); the leader moves if it was marked.
func (s *Server) memberHealthHandler(unhealthy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, found := r.PathValue("member"), false
		ok := s.onCluster(w, r, false, func(c *Cluster) {
			m, exists := c.members[name]
			if found = exists; exists {
				m.forcedUnhealthy = unhealthy
				c.advanceBy(s.reg.clock.Now(), 0)
			}
		})
		switch {
		case !ok:
		case !found:
			adminError(w, http.StatusNotFound, "no PD member %q in cluster %s", name, keyOf(r))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

// storeDownHandler forces a store Down (or clears it): it stops heartbeating and loses its leaders at once.
func (s *Server) storeDownHandler(down bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
		if err != nil {
			adminError(w, http.StatusBadRequest, "store id %q: %v", r.PathValue("id"), err)
			return
		}
		found := false
		ok := s.onCluster(w, r, false, func(c *Cluster) {
			st, exists := c.stores[id]
			if found = exists; exists {
				st.forcedDown = down
				c.advanceBy(s.reg.clock.Now(), 0)
			}
		})
		switch {
		case !ok:
		case !found:
			adminError(w, http.StatusNotFound, "no store %d in cluster %s", id, keyOf(r))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

// pdUnreachableHandler makes every PD address of the cluster refuse connections (or restores them).
func (s *Server) pdUnreachableHandler(unreachable bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.onCluster(w, r, true, func(c *Cluster) { c.pdUnreachable = unreachable }) {
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

func (s *Server) handleListFaults(w http.ResponseWriter, r *http.Request) {
	var faults []api.Fault
	if s.onCluster(w, r, false, func(c *Cluster) { faults = c.faultList() }) {
		writeJSON(w, http.StatusOK, faults)
	}
}

func (s *Server) handleAddFault(w http.ResponseWriter, r *http.Request) {
	var f api.Fault
	if err := readJSON(r, &f); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := validateFault(f); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var added api.Fault
	s.onCluster(w, r, true, func(c *Cluster) { added, _ = c.addFault(f) })
	writeJSON(w, http.StatusCreated, added)
}

func (s *Server) handleClearFaults(w http.ResponseWriter, r *http.Request) {
	if s.onCluster(w, r, false, func(c *Cluster) { c.faults = nil }) {
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) handleDeleteFault(w http.ResponseWriter, r *http.Request) {
	id, found := r.PathValue("id"), false
	if !s.onCluster(w, r, false, func(c *Cluster) { found = c.removeFault(id) }) {
		return
	}
	if !found {
		adminError(w, http.StatusNotFound, "no fault %q in cluster %s", id, keyOf(r))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func timingsJSON(t Timings) api.Timings {
	return api.Timings{
		MaxStoreDownTime: api.Duration(t.MaxStoreDownTime), StoreDisconnectTime: api.Duration(t.StoreDisconnectTime),
		RegionMigrationTime: api.Duration(t.RegionMigrationTime), LeaderDrainTime: api.Duration(t.LeaderDrainTime),
		LeaderReturnTime: api.Duration(t.LeaderReturnTime), TiCDCDrainTime: api.Duration(t.TiCDCDrainTime),
		PumpOfflineTime: api.Duration(t.PumpOfflineTime), PDReadyDelay: api.Duration(t.PDReadyDelay),
	}
}

func (s *Server) handleGetTimings(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, timingsJSON(s.reg.Timings()))
}

func (s *Server) handleSetTimings(w http.ResponseWriter, r *http.Request) {
	var upd api.TimingsUpdate
	if err := readJSON(r, &upd); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	t, err := s.reg.UpdateTimings(func(t *Timings) { applyTimings(t, upd) })
	if err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, timingsJSON(t))
}

// handleSetClusterTimings gives one cluster timings of its own: the fields of the update over its current
// ones (the simulator-wide ones until the first such call). A negative duration changes nothing (400).
func (s *Server) handleSetClusterTimings(w http.ResponseWriter, r *http.Request) {
	var upd api.TimingsUpdate
	if err := readJSON(r, &upd); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var (
		out Timings
		err error
	)
	if !s.onCluster(w, r, true, func(c *Cluster) {
		t := c.timings()
		applyTimings(&t, upd)
		if err = t.Validate(); err == nil {
			c.ownTimings, out = &t, t
		}
	}) {
		return
	}
	if err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, timingsJSON(out))
}

// applyTimings sets the durations upd names.
func applyTimings(t *Timings, upd api.TimingsUpdate) {
	for _, f := range []struct {
		in  *api.Duration
		out *time.Duration
	}{
		{upd.MaxStoreDownTime, &t.MaxStoreDownTime}, {upd.StoreDisconnectTime, &t.StoreDisconnectTime},
		{upd.RegionMigrationTime, &t.RegionMigrationTime}, {upd.LeaderDrainTime, &t.LeaderDrainTime},
		{upd.LeaderReturnTime, &t.LeaderReturnTime}, {upd.TiCDCDrainTime, &t.TiCDCDrainTime},
		{upd.PumpOfflineTime, &t.PumpOfflineTime}, {upd.PDReadyDelay, &t.PDReadyDelay},
	} {
		if f.in != nil {
			*f.out = time.Duration(*f.in)
		}
	}
}
