package simulator

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// dmAdminRoutes registers the DMCluster admin endpoints under /sim/v1/dmclusters.
func (s *Server) dmAdminRoutes(mux *http.ServeMux) {
	const dc = api.PathPrefix + "/dmclusters/{namespace}/{name}"
	mux.HandleFunc("GET "+api.PathPrefix+"/dmclusters", s.handleListDMClusters)
	mux.HandleFunc("GET "+dc, s.handleGetDMCluster)
	mux.HandleFunc("PUT "+dc+"/masters/{member}/unhealthy", s.dmMasterHealthHandler(true))
	mux.HandleFunc("DELETE "+dc+"/masters/{member}/unhealthy", s.dmMasterHealthHandler(false))
	mux.HandleFunc("GET "+dc+"/faults", s.handleListDMFaults)
	mux.HandleFunc("POST "+dc+"/faults", s.handleAddDMFault)
	mux.HandleFunc("DELETE "+dc+"/faults", s.handleClearDMFaults)
	mux.HandleFunc("DELETE "+dc+"/faults/{id}", s.handleDeleteDMFault)
}

// onDM runs fn on the DMCluster of the request, answering 404 when it is unknown (unless create).
func (s *Server) onDM(w http.ResponseWriter, r *http.Request, create bool, fn func(d *dmCluster)) bool {
	if s.reg.withDM(keyOf(r), create, fn) {
		return true
	}
	adminError(w, http.StatusNotFound, "no simulated DMCluster %s", keyOf(r))
	return false
}

func (s *Server) handleListDMClusters(w http.ResponseWriter, _ *http.Request) {
	out := []api.DMClusterSummary{}
	for _, key := range s.reg.dmKeys() {
		s.reg.withDM(key, false, func(d *dmCluster) {
			out = append(out, api.DMClusterSummary{Namespace: key.Namespace, Name: key.Name, Leader: d.leader,
				Masters: len(d.masters), Workers: len(d.workers)})
		})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGetDMCluster(w http.ResponseWriter, r *http.Request) {
	var state api.DMClusterState
	if s.onDM(w, r, false, func(d *dmCluster) { state = d.snapshot() }) {
		writeJSON(w, http.StatusOK, state)
	}
}

// snapshot renders the DMCluster for the admin API.
func (d *dmCluster) snapshot() api.DMClusterState {
	st := api.DMClusterState{
		Namespace: d.key.Namespace, Name: d.key.Name, Leader: d.leader, Masters: []api.DMMaster{}, Workers: []api.DMWorker{},
		LeaderChanges: append([]api.LeaderChange{}, d.leaderChanges...), Evictions: append([]api.DMEviction{}, d.evictions...),
		Deletes: append([]api.DMDelete{}, d.deletes...), Faults: []api.Fault{},
		TLSOnly: d.tlsOnly, TLSRequests: d.tlsRequests, PlainRequests: d.plainRequests, PlainRefused: d.plainRefused,
	}
	for _, m := range d.sortedMasters() {
		var started *time.Time
		if m.proc != "" {
			started = timePtr(m.startedAt)
		}
		st.Masters = append(st.Masters, api.DMMaster{Name: m.name, MemberID: m.id, Alive: d.alive(m), ForcedUnhealthy: m.unhealthy,
			Leader: m.name == d.leader, Evicted: m.evicted, PodUID: m.podUID, StartedAt: started})
	}
	for _, wk := range d.sortedWorkers() {
		st.Workers = append(st.Workers, api.DMWorker{Name: wk.name, Addr: wk.addr, Stage: wk.stage()})
	}
	for _, f := range d.faults {
		st.Faults = append(st.Faults, f.Fault)
	}
	return st
}

// dmMasterHealthHandler marks a dm-master member unhealthy (not alive: it loses leadership and counts
// against the quorum), or clears the mark.
func (s *Server) dmMasterHealthHandler(unhealthy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, found := r.PathValue("member"), false
		ok := s.onDM(w, r, false, func(d *dmCluster) {
			m, exists := d.masters[name]
			if found = exists; exists {
				m.unhealthy = unhealthy
				d.sync(s.reg.clock.Now())
			}
		})
		switch {
		case !ok:
		case !found:
			adminError(w, http.StatusNotFound, "no dm-master member %q in DMCluster %s", name, keyOf(r))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

func (s *Server) handleListDMFaults(w http.ResponseWriter, r *http.Request) {
	var faults []api.Fault
	if s.onDM(w, r, false, func(d *dmCluster) { faults = d.snapshot().Faults }) {
		writeJSON(w, http.StatusOK, faults)
	}
}

// validateDMFault checks a fault of a DMCluster: as validateFault, with component "dm-master" or empty.
func validateDMFault(f api.Fault) error {
	if f.Component != "" && f.Component != string(ComponentDMMaster) {
		return fmt.Errorf("unknown DM component %q (want dm-master or empty)", f.Component)
	}
	f.Component = ""
	return validateFault(f)
}

func (s *Server) handleAddDMFault(w http.ResponseWriter, r *http.Request) {
	var f api.Fault
	if err := readJSON(r, &f); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := validateDMFault(f); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.onDM(w, r, true, func(d *dmCluster) {
		d.nextFaultID++
		f.ID, f.Method, f.Hits = strconv.Itoa(d.nextFaultID), strings.ToUpper(f.Method), 0
		d.faults = append(d.faults, &fault{Fault: f})
		d.log.Info("fault injected", "fault", f.ID, "kind", f.Kind, "method", f.Method, "pathPrefix", f.PathPrefix)
	})
	writeJSON(w, http.StatusCreated, f)
}

func (s *Server) handleClearDMFaults(w http.ResponseWriter, r *http.Request) {
	if s.onDM(w, r, false, func(d *dmCluster) { d.faults = nil }) {
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) handleDeleteDMFault(w http.ResponseWriter, r *http.Request) {
	id, found := r.PathValue("id"), false
	if !s.onDM(w, r, false, func(d *dmCluster) {
		n := len(d.faults)
		d.faults = slices.DeleteFunc(d.faults, func(f *fault) bool { return f.ID == id })
		found = len(d.faults) < n
	}) {
		return
	}
	if !found {
		adminError(w, http.StatusNotFound, "no fault %q in DMCluster %s", id, keyOf(r))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
