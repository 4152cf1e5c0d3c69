package simulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// Samples of TiCDC v8 answers, as tiflow renders them (cdc/api/status, cdc/api/v1, cdc/model/http_model.go).
const (
	cdcSampleRootStatus   = `{"version": "v8.5.0", "git_hash": "d4b0a4a24ca2ad35e2b7c4d2fd8d8e2ff0b8ff5e", "id": "26f822f4-fe42-4a86-ac76-b5f79d5122ce", "pid": 1, "is_owner": true}`
	cdcSampleServerStatus = `{"version": "v8.5.0", "git_hash": "d4b0a4a24ca2ad35e2b7c4d2fd8d8e2ff0b8ff5e", "id": "26f822f4-fe42-4a86-ac76-b5f79d5122ce",
	  "cluster_id": "default", "pid": 1, "is_owner": true, "liveness": 0}`
	cdcSampleCaptures = `[{"id": "26f822f4-fe42-4a86-ac76-b5f79d5122ce", "is_owner": true,
	  "address": "basic-ticdc-0.basic-ticdc-peer.default.svc:8301", "cluster_id": "default"}]`
	cdcSampleDrain = `{"current_table_count": 3}`
	cdcSampleError = `{"error_msg": "[CDC:ErrCaptureNotExist]capture not exists, capture-not-found", "error_code": "CDC:ErrCaptureNotExist"}`
	// tiproxySampleHealth is TiProxy's `GET /api/debug/health` (lib/config.HealthInfo).
	tiproxySampleHealth = `{"config_checksum": 3134400434}`
)

func TestTiCDCContract(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 2)

	r := h.cdc("basic-ticdc-0", http.MethodGet, "/status", "")
	wantStatus(t, r, http.StatusOK)
	assertSameShape(t, cdcSampleRootStatus, r.body)
	if ct := r.header.Get("Content-Type"); ct != "application/json" || !strings.HasPrefix(r.body, "{\n \"version\"") {
		t.Errorf("/status is one-space indented application/json, got %q:\n%s", ct, r.body)
	}

	r = h.cdc("basic-ticdc-1", http.MethodGet, "/api/v1/status", "")
	wantStatus(t, r, http.StatusOK)
	assertSameShape(t, cdcSampleServerStatus, r.body)
	if st := decode[cdcServerStatus](t, r); st.IsOwner || st.ID != h.captures()["basic-ticdc-1"].ID || st.Liveness != 0 {
		t.Errorf("/api/v1/status of a non-owner = %+v", st)
	}

	r = h.cdc("basic-ticdc-1", http.MethodGet, "/api/v1/captures", "")
	wantStatus(t, r, http.StatusOK)
	assertSameShape(t, cdcSampleCaptures, r.body)
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" || !strings.HasPrefix(r.body, "[\n    {\n        \"id\"") {
		t.Errorf("gin's IndentedJSON is four-space indented, got %q:\n%s", ct, r.body)
	}
	caps := decode[[]cdcCapture](t, r)
	if len(caps) != 2 || !caps[0].IsOwner || caps[1].IsOwner || caps[1].AdvertiseAddr != "basic-ticdc-1.basic-ticdc-peer.default.svc:8301" {
		t.Errorf("captures = %+v", caps)
	}

	r = h.drain("basic-ticdc-1", "basic-ticdc-1")
	wantStatus(t, r, http.StatusAccepted)
	assertSameShape(t, cdcSampleDrain, r.body)
	assertSameShape(t, cdcSampleError, h.cdc("basic-ticdc-1", http.MethodPut, "/api/v1/captures/drain", `{"capture_id":"x"}`).body)

	// The headless Service reaches some TiCDC server; unknown paths are 404.
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-ticdc-peer.default.svc:8301/api/v1/health", ""), http.StatusOK)
	wantStatus(t, h.cdc("basic-ticdc-0", http.MethodGet, "/api/v2/captures", ""), http.StatusNotFound)
}

// TestCaptureAddressFollowsTheClusterDomain: the advertised address is the one the operator's start
// script gives TiCDC, so the operator can find a pod's capture by its address.
func TestCaptureAddressFollowsTheClusterDomain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 1)
	h.with(func(c *Cluster) { c.tcDomain = "cluster.local" }) // as spec.clusterDomain of the TidbCluster sets it
	want := "basic-ticdc-0.basic-ticdc-peer.default.svc.cluster.local:8301"
	if got := h.captures()["basic-ticdc-0"].Address; got != want {
		t.Errorf("address = %q, want %q", got, want)
	}
}

// snapshotTiProxy returns the TiProxy servers as the admin API lists them.
func (h *harness) snapshotTiProxy() []api.TiProxyServer {
	var out []api.TiProxyServer
	h.with(func(c *Cluster) { out = c.tiproxyList() })
	return out
}

func TestTiProxyHealth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentTiProxy, 2) // TiProxy's API does not wait for PD
	health := func(host string) response {
		return h.proxy(http.MethodGet, "http://"+host+":3080/api/debug/health", "")
	}
	for _, host := range []string{
		"basic-tiproxy-0.basic-tiproxy-peer.default", "basic-tiproxy-1.basic-tiproxy-peer.default.svc.cluster.local",
		"basic-tiproxy.default", "basic-tiproxy-peer.default.svc",
	} {
		r := health(host)
		wantStatus(t, r, http.StatusOK)
		assertSameShape(t, tiproxySampleHealth, r.body)
		if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" || strings.Contains(r.body, "\n") {
			t.Errorf("%s: gin's compact JSON expected, got %q %q", host, ct, r.body)
		}
	}

	h.with(func(c *Cluster) { c.tiproxyUnhealthy["basic-tiproxy-1"] = true })
	for _, path := range []string{"/api/debug/health", "/api/admin/config/"} {
		r := h.proxy(http.MethodGet, "http://basic-tiproxy-1.basic-tiproxy-peer.default:3080"+path, "")
		if r.status != http.StatusInternalServerError || r.body != `"service not ready"` {
			t.Errorf("unhealthy %s = %d %q", path, r.status, r.body)
		}
	}
	wantStatus(t, health("basic-tiproxy-0.basic-tiproxy-peer.default"), http.StatusOK)

	p := h.pods["basic-tiproxy-0"]
	p.Running = false
	h.setPod(p)
	if r := health("basic-tiproxy-0.basic-tiproxy-peer.default"); r.status != http.StatusBadGateway || !strings.Contains(r.body, "connection refused") {
		t.Errorf("a TiProxy pod that does not run must refuse connections: %d %q", r.status, r.body)
	}
	h.deletePod("basic-tiproxy-1")
	if r := health("basic-tiproxy.default"); r.status != http.StatusBadGateway || !strings.Contains(r.body, "no endpoints") {
		t.Errorf("the Service without a running pod: %d %q", r.status, r.body)
	}
	if list := h.snapshotTiProxy(); len(list) != 1 || list[0].Running || list[0].Healthy {
		t.Errorf("TiProxy servers = %+v", list)
	}
}
