package simulator

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	tidbSampleStatus = `{"connections": 0, "version": "8.0.11-TiDB-v8.5.0", "git_hash": "c4dcbe1a8e3e2a1ab3c4bbfd2a2d7f5c3b9d1e0f"}`
	tidbSampleInfo   = `{"is_owner": true, "max_procs": 16, "gogc": 100, "version": "8.0.11-TiDB-v8.5.0",
	  "git_hash": "c4dcbe1a8e3e2a1ab3c4bbfd2a2d7f5c3b9d1e0f", "ddl_id": "6b1e4f4e-6bb7-4b1e-9c5b-0c7c2a4f0e41",
	  "ip": "basic-tidb-0.basic-tidb-peer.default.svc", "listening_port": 4000, "status_port": 10080,
	  "lease": "45s", "binlog_status": "Off", "start_timestamp": 1717000000, "labels": {}, "server_id": 0}`
)

func TestTiDBStatusAndInfo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 2)
	tidb := func(pod, path string) response {
		return h.proxy(http.MethodGet, "http://"+pod+".basic-tidb-peer.default:10080"+path, "")
	}
	status := tidb("basic-tidb-1", "/status")
	wantStatus(t, status, http.StatusOK)
	assertSameShape(t, tidbSampleStatus, status.body)

	for pod, owner := range map[string]bool{"basic-tidb-0": true, "basic-tidb-1": false} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			r := h.proxy(method, "http://"+pod+".basic-tidb-peer.default:10080/info", "")
			wantStatus(t, r, http.StatusOK)
			assertSameShape(t, tidbSampleInfo, r.body)
			if info := decode[tidbInfo](t, r); info.IsOwner != owner || !strings.HasPrefix(info.IP, pod+".") {
				t.Errorf("%s %s info = %+v, want owner %v", method, pod, info, owner)
			}
		}
	}

	// A real TiDB answers /status while it serves, whatever PD and TiKV do.
	h.setReady("basic-tikv-0", false)
	h.setReady("basic-pd-0", false)
	wantStatus(t, tidb("basic-tidb-0", "/status"), http.StatusOK)
	// It fails when marked unhealthy through the admin API.
	admin := "/sim/v1/clusters/default/basic/tidb-servers/basic-tidb-0/unhealthy"
	if r := h.admin(http.MethodPut, admin); r.status != http.StatusNoContent {
		t.Fatalf("mark unhealthy = %d %s", r.status, r.body)
	}
	wantStatus(t, tidb("basic-tidb-0", "/status"), http.StatusInternalServerError)
	h.admin(http.MethodDelete, admin)
	wantStatus(t, tidb("basic-tidb-0", "/status"), http.StatusOK)
}

func TestTiKVMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	h.with(func(c *Cluster) { _, _ = c.addEvictLeader(1) })
	h.step(h.reg.Timings().LeaderDrainTime)
	r := h.proxy(http.MethodGet, "http://basic-tikv-0.basic-tikv-peer.default.svc:20180/metrics", "")
	wantStatus(t, r, http.StatusOK)
	for _, line := range []string{
		"# TYPE tikv_raftstore_region_count gauge\n",
		"tikv_raftstore_region_count{type=\"leader\"} 0\n",
		"tikv_raftstore_region_count{type=\"region\"} 1000\n",
	} {
		if !strings.Contains(r.body, line) {
			t.Errorf("metrics lack %q:\n%s", line, r.body)
		}
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type = %q", ct)
	}
	r = h.proxy(http.MethodGet, "http://basic-tikv-1.basic-tikv-peer.default.svc:20180/metrics", "")
	if !strings.Contains(r.body, "tikv_raftstore_region_count{type=\"leader\"} 500\n") {
		t.Errorf("store 2 should hold half the leaders:\n%s", r.body)
	}
}

// admin sends a request to the simulator's admin API (origin form).
func (h *harness) admin(method, path string) response {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}
