package simulator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// malformed requests that must be refused (4xx/5xx), never served as success and never panic.
func TestMalformedRequestsAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(3, 3, 1)
	huge := `{"zone": "` + strings.Repeat("a", 2<<20) + `"}`
	cases := []struct{ method, path, body string }{
		{"GET", "/pd/api/v1/store/-1", ""},
		{"GET", "/pd/api/v1/store/18446744073709551616", ""},
		{"GET", "/pd/api/v1/store/1%00", ""},
		{"GET", "/pd/api/v1/store/0x10", ""},
		{"GET", "/pd/api/v1/store/", ""},
		{"DELETE", "/pd/api/v1/store/abc", ""},
		{"DELETE", "/pd/api/v1/store/1.5", ""},
		{"POST", "/pd/api/v1/store/-3/state?state=Up", ""},
		{"POST", "/pd/api/v1/store/1/state", ""},
		{"POST", "/pd/api/v1/store/1/label", ""},
		{"POST", "/pd/api/v1/store/1/label", "{"},
		{"POST", "/pd/api/v1/store/1/label", "null trailing"},
		{"POST", "/pd/api/v1/store/1/label", `{"a":"b"}{"c":"d"}`},
		{"POST", "/pd/api/v1/store/1/label", `{"zone": 7}`},
		{"POST", "/pd/api/v1/store/1/label", `{"zone": "a b"}`},
		{"POST", "/pd/api/v1/store/1/label", huge},
		{"DELETE", "/pd/api/v1/members/id/-5", ""},
		{"DELETE", "/pd/api/v1/members/id/99999999999999999999", ""},
		{"DELETE", "/pd/api/v1/members/name/", ""},
		{"POST", "/pd/api/v1/leader/transfer/", ""},
		{"POST", "/pd/api/v1/leader/transfer/%2e%2e", ""},
		{"GET", "/pd/api/v1/stores?state=&state=1", ""},
		{"GET", "/pd/api/v1/stores?state=99999999999999999999", ""},
		{"GET", "/pd/api/v1/stores?state=-1", ""},
		{"POST", "/pd/api/v1/schedulers", ""},
		{"POST", "/pd/api/v1/schedulers", "[]"},
		{"POST", "/pd/api/v1/schedulers", `{"name": 123}`},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":-1}`},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1.5}`},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1e30}`},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":"1"}`},
		{"DELETE", "/pd/api/v1/schedulers/evict-leader-scheduler-99999999999999999999", ""},
		{"DELETE", "/pd/api/v1/schedulers/evict-leader-scheduler--1", ""},
		{"POST", "/pd/api/v1/config/replicate", `{"max-replicas": "three"}`},
		{"POST", "/pd/api/v1/config/replicate", `{"max-replicas": -1}`},
		{"POST", "/pd/api/v1/config/replicate", `{"location-labels": ["zone"]}`},
		{"PATCH", "/pd/api/v1/config/replicate", "{}"},
		{"POST", "/pd/api/v1/config/replicate", `{"enable-placement-rules": "maybe"}`},
		{"POST", "/pd/api/v1/config/rules/group/tiflash", "[]"},
		{"GET", "/../../etc/passwd", ""},
		{"BREW", "/pd/api/v1/members", ""},
	}
	for _, tc := range cases {
		r := h.pd(tc.method, tc.path, tc.body)
		if r.status < 300 || r.status > 599 {
			t.Errorf("%s %s %.40q = %d %.200q, want a refusal", tc.method, tc.path, tc.body, r.status, r.body)
		}
	}
}

func TestMalformedAdminRequestsAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 0)
	cases := []struct{ method, path, body string }{
		{"POST", "/sim/v1/clusters/default/basic/faults", "{"},
		{"POST", "/sim/v1/clusters/default/basic/faults", `{"kind":"error","status":"500"}`},
		{"POST", "/sim/v1/clusters/default/basic/faults", `{"kind":"latency","delay":"forever"}`},
		{"PUT", "/sim/v1/clusters/default/basic/config", `{"regionCount": -5}`},
		{"PUT", "/sim/v1/clusters/default/basic/config", `{"maxReplicas": -1}`},
		{"PUT", "/sim/v1/clusters/default/basic/stores/abc/down", ""},
		{"PUT", "/sim/v1/clusters/default/basic/stores/-1/down", ""},
		{"PUT", "/sim/v1/clusters/default/basic/tiflash-replicas/abc", `{"count": 1}`},
		{"PUT", "/sim/v1/clusters/default/basic/tiflash-replicas/-4", `{"count": 1}`},
		{"PUT", "/sim/v1/clusters/default/basic/tiflash-replicas/45", `{"count": "2"}`},
		{"PUT", "/sim/v1/clusters/default/basic/tiflash-replicas/45", `{"count": -2}`},
		{"PUT", "/sim/v1/clusters/default/basic/tiflash-replicas/45", ""},
		{"PUT", "/sim/v1/timings", `{"maxStoreDownTime": 10}`},
		{"PUT", "/sim/v1/timings", `{"leaderDrainTime": "-1s"}`},
		{"PUT", "/sim/v1/timings", `{"ticdcDrainTime": "-1s"}`},
		{"PUT", "/sim/v1/clusters/default/basic/config", `{"ticdcTables": -1}`},
		{"PUT", "/sim/v1/clusters/default/basic/captures/basic-ticdc-9/unhealthy", ""},
		{"DELETE", "/sim/v1/clusters/default/basic/tiproxy-servers/basic-pd-0/unhealthy", ""},
		{"PUT", "/sim/v1/timings", `{"pumpOfflineTime": "-1s"}`},
		{"PUT", "/sim/v1/clusters/default/basic/pump-nodes/basic-pump-9:8250/state", `{"state": "offline"}`},
		{"PUT", "/sim/v1/clusters/default/basic/pump-nodes/basic-pump-0:8250/state", `{"state": "Offline"}`},
		{"PUT", "/sim/v1/clusters/default/basic/pump-nodes/basic-pump-0:8250/state", `{"state": 1}`},
		{"PUT", "/sim/v1/clusters/nope/basic/pump-nodes/basic-pump-0:8250/state", `{"state": "offline"}`},
		{"GET", "/sim/v1/clusters/default", ""},
		{"GET", "/sim/v1/nope", ""},
		{"DELETE", "/sim/v1/clusters/nope/nope/faults", ""},
	}
	for _, tc := range cases {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, req)
		if rec.Code < 400 || rec.Code > 499 {
			t.Errorf("%s %s %q = %d %q, want a 4xx", tc.method, tc.path, tc.body, rec.Code, rec.Body.String())
		}
	}
}

// serveRaw sends an arbitrary request straight to the handler; it builds the request by hand because
// httptest.NewRequest panics on inputs a real client could still send.
func serveRaw(s *Server, method, rawURL, host, body string, viaProxy bool) int {
	u, err := url.Parse(rawURL)
	if err != nil {
		return -1
	}
	if !viaProxy {
		u.Scheme, u.Host = "", ""
	}
	req := (&http.Request{
		Method: method, URL: u, Host: host, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: http.NoBody, RequestURI: rawURL,
	}).WithContext(context.Background())
	if body != "" {
		req.Body = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)).Body
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code
}

func FuzzParseTarget(f *testing.F) {
	for _, seed := range []string{
		"basic-pd.default:2379", "basic-pd-0.basic-pd-peer.default.svc.cluster.local:2379", "x-tikv-peer.y:20180",
		"[::1]:2379", "a..b:1", ".:", "basic-tidb.ns:10080", "%zz:99", strings.Repeat("a.", 200) + "svc:2379",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, host string) {
		tgt, err := parseTarget(host, "80")
		if err == nil && (tgt.key.Name == "" || tgt.key.Namespace == "") {
			t.Fatalf("parseTarget(%q) accepted an empty cluster key: %+v", host, tgt)
		}
	})
}

func FuzzServe(f *testing.F) {
	seeds := []struct{ method, url, body string }{
		{"GET", "http://basic-pd.default:2379/pd/api/v1/stores?state=2", ""},
		{"POST", "http://basic-pd.default:2379/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1}`},
		{"DELETE", "http://basic-pd-1.basic-pd-peer.default:2379/pd/api/v1/members/id/1", ""},
		{"POST", "http://basic-pd.default:2379/pd/api/v1/store/1/label", `{"k":"v"}`},
		{"GET", "http://basic-tikv-0.basic-tikv-peer.default:20180/metrics", ""},
		{"PUT", "http://basic-ticdc-0.basic-ticdc-peer.default:8301/api/v1/captures/drain", `{"capture_id":"x"}`},
		{"POST", "http://basic-ticdc-peer.default:8301/api/v1/owner/resign", ""},
		{"GET", "http://basic-tiproxy.default:3080/api/debug/health", ""},
		{"PUT", "http://basic-pump-0.basic-pump.default:8250/state/basic-pump-0:8250/close", ""},
		{"GET", "http://basic-pump.default:8250/status", ""},
		{"POST", "http://x/sim/v1/clusters/default/basic/faults", `{"kind":"drop"}`},
		{"CONNECT", "http://basic-pd.default:2379", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.url, s.body, true)
	}
	f.Fuzz(func(t *testing.T, method, rawURL, body string, viaProxy bool) {
		h := newHarness(t)
		h.bootstrap(1, 1, 1)
		h.addPods(ComponentTiCDC, 2)
		h.addPods(ComponentTiProxy, 1)
		h.addPods(ComponentPump, 2)
		u, err := url.Parse(rawURL)
		if err != nil || method == "" {
			return
		}
		if code := serveRaw(h.srv, method, rawURL, u.Host, body, viaProxy); code < 100 || code > 599 {
			t.Fatalf("%s %s answered status %d", method, rawURL, code)
		}
	})
}
