package simulator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	basic := ClusterKey{Namespace: "ns1", Name: "basic"}
	cases := []struct {
		host    string
		kind    targetKind
		key     ClusterKey
		pod     string
		wantErr bool
	}{
		{host: "basic-pd.ns1:2379", kind: targetPDService, key: basic},
		{host: "basic-pd.ns1.svc:2379", kind: targetPDService, key: basic},
		{host: "basic-pd.ns1.svc.cluster.local:2379", kind: targetPDService, key: basic},
		{host: "BASIC-PD.NS1.SVC.CLUSTER.LOCAL.:2379", kind: targetPDService, key: basic},
		{host: "basic-pd-peer.ns1:2379", kind: targetPDService, key: basic},
		{host: "basic-pd-1.basic-pd-peer.ns1:2379", kind: targetPDMember, key: basic, pod: "basic-pd-1"},
		{host: "basic-pd-1.basic-pd-peer.ns1.svc:2379", kind: targetPDMember, key: basic, pod: "basic-pd-1"},
		{host: "basic-pd-1.basic-pd-peer.ns1.svc.my.domain:2379", kind: targetPDMember, key: basic, pod: "basic-pd-1"},
		{host: "my-db-tidb-0.my-db-tidb-peer.ns1:10080", kind: targetTiDBPod, key: ClusterKey{"ns1", "my-db"}, pod: "my-db-tidb-0"},
		{host: "basic-tidb.ns1:10080", kind: targetTiDBService, key: basic},
		{host: "basic-tikv-2.basic-tikv-peer.ns1.svc:20180", kind: targetTiKVPod, key: basic, pod: "basic-tikv-2"},
		{host: "a-pd-pd.ns1:2379", kind: targetPDService, key: ClusterKey{"ns1", "a-pd"}},
		{host: "basic-tiflash-1.basic-tiflash-peer.ns1:20292", kind: targetTiFlashPod, key: basic, pod: "basic-tiflash-1"},
		{host: "basic-tiflash-1.basic-tiflash-peer.ns1.svc.cluster.local:20292", kind: targetTiFlashPod, key: basic, pod: "basic-tiflash-1"},
		{host: "basic-tiflash-peer.ns1:20292", wantErr: true},
		{host: "basic-ticdc-1.basic-ticdc-peer.ns1:8301", kind: targetTiCDCPod, key: basic, pod: "basic-ticdc-1"},
		{host: "basic-ticdc-1.basic-ticdc-peer.ns1.svc.cluster.local:8301", kind: targetTiCDCPod, key: basic, pod: "basic-ticdc-1"},
		{host: "basic-ticdc-peer.ns1:8301", kind: targetTiCDCService, key: basic},
		{host: "basic-ticdc-0.basic-ticdc-peer.ns1:8300", wantErr: true},
		{host: "basic-ticdc.ns1:8301", wantErr: true},
		{host: "basic-tiproxy.ns1:3080", kind: targetTiProxyService, key: basic},
		{host: "basic-tiproxy-peer.ns1.svc:3080", kind: targetTiProxyService, key: basic},
		{host: "basic-tiproxy-2.basic-tiproxy-peer.ns1:3080", kind: targetTiProxyPod, key: basic, pod: "basic-tiproxy-2"},
		{host: "basic-tiproxy-0.basic-tiproxy.ns1:3080", wantErr: true},
		{host: "basic-tiproxy.ns1:6000", wantErr: true},
		{host: "basic-tso.ns1:2379", kind: targetPDMSService, key: basic},
		{host: "basic-scheduling-peer.ns1.svc:2379", kind: targetPDMSService, key: basic},
		{host: "basic-tso-1.basic-tso-peer.ns1:2379", kind: targetPDMSPod, key: basic, pod: "basic-tso-1"},
		{host: "basic-tso.ns1:2380", wantErr: true},
		{host: "basic-pump-0.basic-pump.ns1:8250", kind: targetPumpPod, key: basic, pod: "basic-pump-0"},
		{host: "basic-pump-1.basic-pump.ns1.svc.cluster.local:8250", kind: targetPumpPod, key: basic, pod: "basic-pump-1"},
		{host: "basic-pump.ns1:8250", kind: targetPumpService, key: basic},
		{host: "basic-pump.ns1.svc:8250", kind: targetPumpService, key: basic},
		{host: "basic-pump-0.basic-pump.ns1:8249", wantErr: true},
		{host: "basic-pump-0.basic-pump-peer.ns1:8250", wantErr: true},
		{host: "a-pump-pump.ns1:8250", kind: targetPumpService, key: ClusterKey{"ns1", "a-pump"}},
		{host: "basic-tiflash-0.basic-tiflash-peer.ns1:3930", wantErr: true},
		{host: "basic-tikv-0.basic-tikv-peer.ns1:20292", wantErr: true},
		{host: "basic-pd.ns1:2380", wantErr: true},
		{host: "basic-pd.ns1", wantErr: true},
		{host: "basic-pd-0.basic-pd.ns1:2379", wantErr: true},
		{host: "basic-tikv-peer.ns1:20180", wantErr: true},
		{host: "basic-tikv-0.basic-tikv-peer.ns1:20160", wantErr: true},
		{host: "basic-tidb-0.basic-tidb-peer.ns1:4000", wantErr: true},
		{host: "basic-discovery.ns1:10261", wantErr: true},
		{host: "-pd.ns1:2379", wantErr: true},
		{host: "127.0.0.1:2379", wantErr: true},
		{host: "localhost:2379", wantErr: true},
		{host: "[::1]:2379", wantErr: true},
		{host: "basic-pd.ns_1:2379", wantErr: true},
		{host: "a.b.c.d:2379", wantErr: true},
		{host: "", wantErr: true},
		{host: ":2379", wantErr: true},
	}
	for _, tc := range cases {
		got, err := parseTarget(tc.host, "80")
		if tc.wantErr {
			if err == nil {
				t.Errorf("parseTarget(%q) = %+v, want an error", tc.host, got)
			}
			continue
		}
		if err != nil || got.kind != tc.kind || got.key != tc.key || got.pod != tc.pod {
			t.Errorf("parseTarget(%q) = %+v, %v; want kind %d key %v pod %q", tc.host, got, err, tc.kind, tc.key, tc.pod)
		}
	}
	if got, err := parseTarget("basic-pd.ns1", "2379"); err != nil || got.kind != targetPDService {
		t.Errorf("the listener's port must be the default: %+v %v", got, err)
	}
}

// startProxy serves the harness over a real listener and returns an HTTP client that uses it as proxy.
func startProxy(t *testing.T, h *harness) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	return srv, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

func TestProxyDispatchWithRealClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(3, 3, 2)
	_, client := startProxy(t, h)
	cases := []struct {
		url    string
		status int
		body   string // substring
	}{
		{"http://basic-pd.default:2379/pd/api/v1/members", 200, `"basic-pd-2"`},
		{"http://basic-pd.default.svc.cluster.local:2379/pd/api/v1/health", 200, `"health": true`},
		{"http://basic-pd-peer.default:2379/pd/api/v1/leader", 200, `"basic-pd-0"`},
		{"http://basic-pd-2.basic-pd-peer.default.svc:2379/pd/api/v1/leader", 200, `"basic-pd-0"`},
		{"http://basic-pd-9.basic-pd-peer.default:2379/pd/api/v1/leader", 502, "connection refused"},
		{"http://other-pd.default:2379/pd/api/v1/members", 502, "no simulated TiDB cluster default/other"},
		{"http://basic-pd.elsewhere:2379/pd/api/v1/members", 502, "no simulated TiDB cluster elsewhere/basic"},
		{"http://example.com/", 502, "cannot resolve"},
		{"http://basic-tikv-1.basic-tikv-peer.default:20180/metrics", 200, `tikv_raftstore_region_count{type="leader"} 333`},
		{"http://basic-tidb-1.basic-tidb-peer.default:10080/status", 200, `"version": "8.0.11-TiDB-v8.5.0"`},
		{"http://basic-tidb.default:10080/status", 200, `"connections": 0`},
		{"http://basic-tidb-7.basic-tidb-peer.default:10080/status", 502, "connection refused"},
	}
	for _, tc := range cases {
		status, body, err := get(t, client, tc.url)
		if err != nil || status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("GET %s = %d %q %v; want %d containing %q", tc.url, status, body, err, tc.status, tc.body)
		}
	}
	if _, _, err := get(t, client, "https://basic-pd.default:2379/pd/api/v1/members"); err == nil ||
		!strings.Contains(err.Error(), "Not Implemented") {
		t.Errorf("https through the proxy = %v, want the CONNECT refused with 501 Not Implemented", err)
	}
}

func TestServiceEndpointsFollowReadiness(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 1)
	h.setReady("basic-pd-0", false)
	r := h.pd(http.MethodGet, "/pd/api/v1/health", "")
	wantStatus(t, r, http.StatusBadGateway)
	if !strings.Contains(r.body, "no endpoints available for service basic-pd") {
		t.Errorf("body = %q", r.body)
	}
	// The headless peer Service publishes not-ready addresses: the member answers, without a leader.
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-pd-peer.default:2379/pd/api/v1/health", ""), http.StatusServiceUnavailable)
	h.setReady("basic-tidb-0", false)
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-tidb-0.basic-tidb-peer.default:10080/status", ""), http.StatusBadGateway)
	h.deletePod("basic-tikv-0")
	wantStatus(t, h.proxy(http.MethodGet, "http://basic-tikv-0.basic-tikv-peer.default:20180/metrics", ""), http.StatusBadGateway)
}

func TestPlainRequestsDispatchOnHostHeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 0)
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	direct := &http.Client{Transport: &http.Transport{Proxy: nil}}
	do := func(host, path string) (int, string, error) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Host = host
		resp, err := direct.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	if status, body, err := do("basic-pd.default:2379", "/pd/api/v1/health"); err != nil || status != 200 || !strings.Contains(body, "basic-pd-0") {
		t.Errorf("Host-dispatched PD request = %d %q %v", status, body, err)
	}
	if status, body, err := do(strings.TrimPrefix(srv.URL, "http://"), "/pd/api/v1/health"); err != nil || status != 404 ||
		!strings.Contains(body, "admin requests to /sim/v1") {
		t.Errorf("request for the simulator's own host = %d %q %v, want a 404 that explains", status, body, err)
	}
	if status, _, err := do(strings.TrimPrefix(srv.URL, "http://"), "/sim/v1/healthz"); err != nil || status != 200 {
		t.Errorf("admin healthz = %d %v", status, err)
	}
	// A refused connection on a direct listener is a closed connection, not an HTTP answer.
	h.setReady("basic-pd-0", false)
	if status, _, err := do("basic-pd.default:2379", "/pd/api/v1/health"); err == nil {
		t.Errorf("direct request to a PD without endpoints answered %d, want the connection closed", status)
	}
}

func TestAdminAPIOnlyWhenAddressedDirectly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv, client := startProxy(t, h)
	// Through the proxy, a URL naming the simulator's own address is not the admin API (and Go would
	// never proxy loopback anyway; this client is forced to).
	status, body, err := get(t, client, srv.URL+"/sim/v1/clusters")
	if err != nil || status != http.StatusBadGateway {
		t.Errorf("admin API through the proxy = %d %q %v, want 502", status, body, err)
	}
	r := httptest.NewRecorder()
	h.srv.ServeHTTP(r, httptest.NewRequest(http.MethodConnect, "basic-pd.default:2379", nil))
	if r.Code != http.StatusNotImplemented || !strings.Contains(r.Body.String(), "TLS not simulated") {
		t.Errorf("CONNECT = %d %q", r.Code, r.Body.String())
	}
}
