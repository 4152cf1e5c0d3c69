package simulator

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Pods are also reachable at their IPs, as a Prometheus inside the cluster
// scrapes them after kubernetes_sd discovery: a proxied request for
// http://<pod IP>:<metrics port>/metrics is answered with a small,
// realistic Prometheus exposition of that pod's component (PD, TiKV, TiDB
// carry their own series; every component has the process series). The
// metrics ports are the ones the operator advertises in the pods'
// prometheus.io/port annotations.

// metricsPorts maps a component to the port its /metrics is served on.
var metricsPorts = map[Component]string{
	ComponentPD:      pdClientPort,
	ComponentTiKV:    tikvStatusPort,
	ComponentTiDB:    tidbStatusPort,
	ComponentTiFlash: "8234",
	ComponentTiCDC:   ticdcPort,
	ComponentTiProxy: tiproxyAPIPort,
	ComponentPump:    pumpPort,
}

// servePodIP answers a proxied request addressed to the IP of a simulated
// pod and reports whether it did (false: host is no such IP). Only a Running pod answers, and only GET
// /metrics on its component's metrics port (TiFlash also on its proxy's
// status port); anything else at a pod IP is refused like a closed port.
func (s *Server) servePodIP(w http.ResponseWriter, r *http.Request, host string) bool {
	ip, port, err := net.SplitHostPort(host)
	if err != nil || net.ParseIP(ip) == nil {
		return false
	}
	var body string
	found := false
	for _, key := range s.reg.keys() {
		s.reg.withCluster(key, false, func(c *Cluster) {
			for _, p := range c.pods {
				if p.IP != ip || !p.Running || found {
					continue
				}
				found = true
				if port == metricsPorts[p.Component] || (p.Component == ComponentTiFlash && port == tiflashProxyStatusPort) {
					body = c.podMetrics(p)
				}
			}
		})
		if found {
			break
		}
	}
	switch {
	case !found:
		return false
	case body == "":
		connectFailure(w, true, host, "connection refused: nothing listens on port "+port)
	case r.Method != http.MethodGet || r.URL.Path != "/metrics":
		writeText(w, http.StatusNotFound, "404 page not found\n")
	default:
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}
	return true
}

// podMetrics renders the exposition of pod p from the cluster's state. The
// caller holds the registry lock.
func (c *Cluster) podMetrics(p PodObservation) string {
	var b strings.Builder
	metric := func(name, typ, help string, samples ...string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for _, s := range samples {
			fmt.Fprintf(&b, "%s%s\n", name, s)
		}
	}
	switch p.Component {
	case ComponentPD:
		leader := "0"
		if c.leader == p.Name {
			leader = "1"
		}
		metric("pd_cluster_status", "gauge", "Status of the cluster.",
			`{type="store_count"} `+strconv.Itoa(len(c.stores)),
			`{type="leader_count"} `+strconv.Itoa(c.regionCount))
		metric("pd_server_is_leader", "gauge", "Whether this member is the PD leader.", " "+leader)
	case ComponentTiKV:
		metric("tikv_raftstore_region_count", "gauge", "Number of regions collected in region_collection_interval.",
			`{type="region"} `+strconv.Itoa(c.regionCount))
		metric("tikv_engine_size_bytes", "gauge", "Sizes of each column families.", `{db="kv",type="default"} 1048576`)
	case ComponentTiDB:
		metric("tidb_server_connections", "gauge", "Number of connections.", " 0")
		metric("tidb_server_query_total", "counter", "Counter of queries.", `{result="OK",type="Query"} 0`)
	}
	metric("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
		" "+strconv.FormatInt(c.lastAdvance.Unix(), 10))
	return b.String()
}
