package simulator

import (
	"io"
	"net/http"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TiFlash stores follow the TiKV store life cycle (registration by pod identity, Up/Disconnected/Down,
// Offline then Tombstone once their replicas have moved) with these differences, all from the real
// components:
//   - a TiFlash registers only after a TiKV bootstrapped the cluster (TiFlash waits for it, so that the
//     first region is never created on TiFlash) and only while PD's placement rules are enabled (PD refuses
//     to put a TiFlash store without them);
//   - its store carries the label engine=tiflash, advertises <pod>.<tc>-tiflash-peer.<ns>.svc:3930, peer
//     address :20170 and status address :20292;
//   - it holds learner replicas of the tables with TiFlash replicas and never a Raft leader;
//   - taken Offline, it becomes Tombstone only while at least as many other TiFlash stores are Up as the
//     largest TiFlash replica count, since PD has nowhere else to put the learners.

// tiflashCanRegister reports whether a TiFlash pod may register its store now: the cluster is bootstrapped
// and placement rules are enabled.
func (c *Cluster) tiflashCanRegister() bool {
	return c.bootstrapped && c.replication.EnablePlacementRules
}

// maxTiFlashReplicas is the largest TiFlash replica count of any table (0 when none), the count that an
// Offline TiFlash store's learners need in other TiFlash stores. Rules are not in force while placement
// rules are disabled.
func (c *Cluster) maxTiFlashReplicas() int {
	if !c.replication.EnablePlacementRules {
		return 0
	}
	most := 0
	for _, r := range c.tiflashReplicas {
		most = max(most, r.count)
	}
	return most
}

// tiflashRegions approximates the region count of an Up TiFlash store: every region is taken to belong to
// a table with the largest TiFlash replica count, whose min(count, Up TiFlash stores) learners spread
// evenly over the Up TiFlash stores; 0 without TiFlash replicas.
func (c *Cluster) tiflashRegions() int {
	replicas, up := c.maxTiFlashReplicas(), c.upStores(ComponentTiFlash)
	if replicas == 0 || up == 0 {
		return 0
	}
	return ceilInt(float64(c.regionCount) * float64(min(replicas, up)) / float64(up))
}

// hasTiFlashStores reports whether a TiFlash store that is not Tombstone exists, which keeps PD from
// disabling placement rules.
func (c *Cluster) hasTiFlashStores() bool {
	for _, s := range c.stores {
		if s.comp == ComponentTiFlash && s.state != pdapi.StoreStateTombstone {
			return true
		}
	}
	return false
}

// tiflashRoutes registers the TiFlash proxy status port (20292) endpoints.
func (s *Server) tiflashRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tiflash/store-status", func(w http.ResponseWriter, r *http.Request) {
		handleTiFlashStoreStatus(w, stateOf(r))
	})
	return mux
}

// TiFlash store statuses as `/tiflash/store-status` words them.
const (
	tiflashStatusIdle    = "Idle"
	tiflashStatusRunning = "Running"
)

// tiflashRunning reports whether the pod's TiFlash answers Running at /tiflash/store-status: its store
// (same pod identity) is registered, not Tombstone and not forced Down. Before that it answers Idle, as a
// TiFlash does until its proxy has joined the cluster.
func (c *Cluster) tiflashRunning(pod string) bool {
	p, ok := c.pods[pod]
	if !ok {
		return false
	}
	s := c.storeByIdentity(identity{pod: p.Name, pvcUID: p.PVCUID})
	return s != nil && s.state != pdapi.StoreStateTombstone && !s.forcedDown
}

// handleTiFlashStoreStatus answers the bare word, without JSON or newline, as TiFlash does.
func handleTiFlashStoreStatus(w http.ResponseWriter, st *reqState) {
	status := tiflashStatusIdle
	if st.c.tiflashRunning(st.t.pod) {
		status = tiflashStatusRunning
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, status)
}
