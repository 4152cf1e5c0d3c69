package simulator

import (
	"net/http"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// captureList renders the registered TiCDC captures, oldest first, for the admin API.
func (c *Cluster) captureList() []api.Capture {
	out := []api.Capture{}
	for _, cp := range c.sortedCaptures() {
		out = append(out, api.Capture{
			PodName: cp.pod, ID: cp.id, Address: c.captureAddress(cp), Version: cp.version, Owner: cp.pod == c.cdcOwner,
			Tables: cp.tables, Draining: cp.pod == c.cdcDrainTarget, ForcedUnhealthy: c.cdcUnhealthy[cp.pod],
		})
	}
	return out
}

// tiproxyList renders the TiProxy pods, by name, for the admin API.
func (c *Cluster) tiproxyList() []api.TiProxyServer {
	out := []api.TiProxyServer{}
	for _, p := range c.podsOf(ComponentTiProxy) {
		out = append(out, api.TiProxyServer{
			Name: p.Name, Running: p.Running, Healthy: c.tiproxyHealthy(p.Name), ForcedUnhealthy: c.tiproxyUnhealthy[p.Name],
		})
	}
	return out
}

// podHealthHandler marks the TiCDC capture, TiProxy server or TiDB server of a pod unhealthy, or clears the mark. The
// mark belongs to the pod name and outlives restarts of its process until it is cleared; 404 when no pod
// of comp has that name.
func (s *Server) podHealthHandler(comp Component, unhealthy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pod, found := r.PathValue("pod"), false
		ok := s.onCluster(w, r, false, func(c *Cluster) {
			p, exists := c.pods[pod]
			if found = exists && p.Component == comp; !found {
				return
			}
			marks := c.cdcUnhealthy
			switch comp {
			case ComponentTiProxy:
				marks = c.tiproxyUnhealthy
			case ComponentTiDB:
				marks = c.tidbUnhealthy
			}
			if unhealthy {
				marks[pod] = true
			} else {
				delete(marks, pod)
			}
			c.log.Info("health mark changed", "component", comp, "pod", pod, "unhealthy", unhealthy)
			c.advanceBy(s.reg.clock.Now(), 0)
		})
		switch {
		case !ok:
		case !found:
			adminError(w, http.StatusNotFound, "no %s pod %q in cluster %s", comp, pod, keyOf(r))
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}
}
