package simulator

import (
	"net/http"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// pumpStates are the states a registry entry can be given through the admin API (tidb-binlog pkg/node).
var pumpStates = map[string]bool{
	pumpOnline: true, pumpPausing: true, pumpPaused: true, pumpClosing: true, pumpOffline: true,
}

// pumpList renders the Pump registry, by node ID, for the admin API.
func (c *Cluster) pumpList() []api.PumpNode {
	out := []api.PumpNode{}
	for _, n := range c.sortedPumpNodes() {
		e := api.PumpNode{
			PodName: n.pod, NodeID: n.id, Host: n.host, State: n.state, MaxCommitTS: n.maxCommitTS, UpdateTS: n.updateTS,
			Serving: n.proc.serving(),
		}
		if e.Serving {
			e.ProcessState = n.proc.state
		}
		out = append(out, e)
	}
	return out
}

// handleSetPumpNodeState writes a registry entry's state as `binlogctl -cmd update-pump` does (straight
// into PD's etcd); a serving online pump writes its own state back with its next heartbeat. 404 when the
// registry has no such node, 400 for a state tidb-binlog does not know.
func (s *Server) handleSetPumpNodeState(w http.ResponseWriter, r *http.Request) {
	var upd api.PumpNodeStateUpdate
	if err := readJSON(r, &upd); err != nil {
		adminError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if !pumpStates[upd.State] {
		adminError(w, http.StatusBadRequest, "unknown Pump state %q (want online, pausing, paused, closing or offline)", upd.State)
		return
	}
	id, found := r.PathValue("nodeID"), false
	var out api.PumpNode
	ok := s.onCluster(w, r, false, func(c *Cluster) {
		n, exists := c.pumpNodes[id]
		if found = exists; !exists {
			return
		}
		n.state = upd.State
		c.log.Info("Pump registry state written", "node", id, "state", upd.State)
		for _, e := range c.pumpList() {
			if e.NodeID == id {
				out = e
			}
		}
	})
	switch {
	case !ok:
	case !found:
		adminError(w, http.StatusNotFound, "no Pump node %q in cluster %s", id, keyOf(r))
	default:
		writeJSON(w, http.StatusOK, out)
	}
}
