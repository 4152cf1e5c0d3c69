package simulator

import (
	"net/http"
	"strings"
	"testing"
)

// TestPodMetricsAtPodIP checks what a Prometheus scraping pods by IP sees:
// each component's exposition at its metrics port, nothing elsewhere, and
// nothing from a pod that is not Running.
func TestPodMetricsAtPodIP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 1)
	ips := map[string]string{"basic-pd-0": "10.244.0.10", "basic-tikv-0": "10.244.0.11", "basic-tidb-0": "10.244.0.12"}
	for name, ip := range ips {
		p := h.pods[name]
		p.IP = ip
		h.setPod(p)
	}
	cases := []struct {
		url    string
		status int
		want   string
	}{
		{"http://10.244.0.10:2379/metrics", http.StatusOK, `pd_cluster_status{type="store_count"} 1`},
		{"http://10.244.0.11:20180/metrics", http.StatusOK, `tikv_raftstore_region_count{type="region"}`},
		{"http://10.244.0.12:10080/metrics", http.StatusOK, "# TYPE tidb_server_connections gauge"},
		{"http://10.244.0.12:10080/metrics", http.StatusOK, "process_start_time_seconds "},
		{"http://10.244.0.12:10080/status", http.StatusNotFound, "404"},
		{"http://10.244.0.12:2379/metrics", http.StatusBadGateway, "nothing listens on port 2379"},
		{"http://10.244.0.99:2379/metrics", http.StatusBadGateway, "cannot resolve"},
	}
	for _, c := range cases {
		r := h.proxy(http.MethodGet, c.url, "")
		if r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("GET %s: %d %q, want %d containing %q", c.url, r.status, r.body, c.status, c.want)
		}
	}
	p := h.pods["basic-tidb-0"]
	p.Running = false
	h.setPod(p)
	if r := h.proxy(http.MethodGet, "http://10.244.0.12:10080/metrics", ""); r.status != http.StatusBadGateway {
		t.Errorf("stopped pod answered %d %q", r.status, r.body)
	}
}
