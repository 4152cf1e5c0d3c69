package simulator

import (
	"math"
	"net/http"
)

// TiProxy's API on port 3080 (pingcap/tiproxy pkg/server/api). Every Running TiProxy pod serves it; a
// server marked unhealthy through the admin API answers as a TiProxy that is not ready: every /api path
// is 500 with the JSON string "service not ready". Only `GET /api/debug/health`, which `tiproxyctl health`
// and the operator call, is simulated; other paths answer 404.

// tiproxyHealth is the body of `GET /api/debug/health` (tiproxy lib/config.HealthInfo).
type tiproxyHealth struct {
	ConfigChecksum uint32 `json:"config_checksum"`
}

// tiproxyRoutes registers TiProxy's API port endpoints behind its readiness check.
func (s *Server) tiproxyRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/debug/health", func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		writeGinJSON(w, http.StatusOK, tiproxyHealth{ConfigChecksum: st.c.tiproxyConfigChecksum()}, false)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st := stateOf(r); st.c.tiproxyUnhealthy[st.t.pod] {
			writeGinJSON(w, http.StatusInternalServerError, "service not ready", false)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// tiproxyConfigChecksum stands for the CRC32 of the TiProxy configuration: the same for every server of
// a cluster, as they share one ConfigMap.
func (c *Cluster) tiproxyConfigChecksum() uint32 {
	return uint32(stableID("tiproxy-config", c.key.String()) & math.MaxUint32) //nolint:gosec // G115: masked to 32 bits
}

// tiproxyHealthy reports whether pod's TiProxy answers its health check with 200.
func (c *Cluster) tiproxyHealthy(pod string) bool {
	p, ok := c.pods[pod]
	return ok && p.Component == ComponentTiProxy && p.Running && !c.tiproxyUnhealthy[pod]
}
