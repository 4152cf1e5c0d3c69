package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
)

// PD's micro-services (spec.pd.mode "ms"): every Running tso or scheduling pod is one member of its
// service, registered in PD. PD lists them at `GET /pd/api/v2/ms/members/{service}` (a JSON array of
// registry entries) and names the primary at `GET /pd/api/v2/ms/primary/{service}` (a JSON string, the
// primary's service address); the primary is the one a transfer chose while it runs, else the running
// member of lowest name. On port 2379 of a service's pods and Services, `GET /tso/api/v1/health` answers
// 200 and `POST /{service}/api/v1/primary/transfer` with `{"new_primary":"<member name>"}` moves the
// primary to a running member (400 for a body without one, 500 for a member that does not run).

// pdmsEntry is one registry entry as PD lists it (discovery.ServiceRegistryEntry).
type pdmsEntry struct {
	ServiceAddr    string `json:"service-addr"`
	Version        string `json:"version"`
	GitHash        string `json:"git-hash"`
	DeployPath     string `json:"deploy-path"`
	StartTimestamp int64  `json:"start-timestamp"`
}

// pdmsComponent maps a service name to the pods' component; ok is false for an unknown service.
func pdmsComponent(service string) (Component, bool) {
	switch c := Component(service); c {
	case ComponentTSO, ComponentScheduling:
		return c, true
	}
	return "", false
}

// pdmsMembers are the running members of service's pods, by name.
func (c *Cluster) pdmsMembers(comp Component) []PodObservation {
	var out []PodObservation
	for _, p := range c.podsOf(comp) {
		if p.Running {
			out = append(out, p)
		}
	}
	return out
}

// pdmsAddr is a member's service address: http[s]://<pod>.<tc>-<svc>-peer.<ns>.svc[.<domain>]:2379.
func (c *Cluster) pdmsAddr(pod string, comp Component) string {
	return c.tls.scheme() + "://" + c.podHost(pod, comp) + ":" + pdClientPort
}

// pdmsPrimaryOf is the running member that is comp's primary ("" when none runs).
func (c *Cluster) pdmsPrimaryOf(comp Component) string {
	members := c.pdmsMembers(comp)
	for _, p := range members {
		if p.Name == c.pdmsPrimary[comp] {
			return p.Name
		}
	}
	if len(members) == 0 {
		return ""
	}
	return members[0].Name
}

func handlePDMSMembers(w http.ResponseWriter, r *http.Request, st *reqState) {
	comp, ok := pdmsComponent(r.PathValue("service"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, "invalid service name")
		return
	}
	out := []pdmsEntry{}
	for _, p := range st.c.pdmsMembers(comp) {
		out = append(out, pdmsEntry{ServiceAddr: st.c.pdmsAddr(p.Name, comp), Version: st.c.version(p), GitHash: simGitHash,
			DeployPath: "/", StartTimestamp: st.now.Unix()})
	}
	writeJSON(w, http.StatusOK, out)
}

func handlePDMSPrimary(w http.ResponseWriter, r *http.Request, st *reqState) {
	comp, ok := pdmsComponent(r.PathValue("service"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, "invalid service name")
		return
	}
	primary := st.c.pdmsPrimaryOf(comp)
	if primary == "" {
		writeJSON(w, http.StatusOK, "")
		return
	}
	writeJSON(w, http.StatusOK, st.c.pdmsAddr(primary, comp))
}

// pdmsRoutes serves port 2379 of the micro-services' pods and Services.
func (s *Server) pdmsRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tso/api/v1/health", func(w http.ResponseWriter, r *http.Request) {
		if stateOf(r).t.component() != ComponentTSO {
			writeText(w, http.StatusNotFound, "404 page not found\n")
			return
		}
		writeJSON(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("POST /{service}/api/v1/primary/transfer", func(w http.ResponseWriter, r *http.Request) {
		handlePDMSTransfer(w, r, stateOf(r))
	})
	return mux
}

func handlePDMSTransfer(w http.ResponseWriter, r *http.Request, st *reqState) {
	comp := st.t.component()
	if r.PathValue("service") != string(comp) {
		writeText(w, http.StatusNotFound, "404 page not found\n")
		return
	}
	var body struct {
		NewPrimary string `json:"new_primary"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.NewPrimary == "" {
		writeJSON(w, http.StatusBadRequest, "new_primary is required")
		return
	}
	pod, _, _ := strings.Cut(body.NewPrimary, ".") // the member name is the pod's name or its FQDN
	for _, p := range st.c.pdmsMembers(comp) {
		if p.Name == pod {
			st.c.pdmsPrimary[comp] = pod
			st.c.log.Info("PD micro-service primary transferred", "service", comp, "primary", pod)
			writeJSON(w, http.StatusOK, "success")
			return
		}
	}
	writeJSON(w, http.StatusInternalServerError, "the new primary "+body.NewPrimary+" is not a member")
}
