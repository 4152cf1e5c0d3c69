package discovery

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// httpCase is one request to the handler. wantBody is the exact body of a 200
// answer and a substring of any other.
type httpCase struct {
	name, method, path string
	wantStatus         int
	wantBody           string
}

func serve(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

func runHTTPCases(t *testing.T, h http.Handler, cases []httpCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			method := c.method
			if method == "" {
				method = http.MethodGet
			}
			rec := serve(h, method, c.path)
			body := rec.Body.String()
			if rec.Code != c.wantStatus {
				t.Fatalf("%s %s: status %d, want %d; body %q", method, c.path, rec.Code, c.wantStatus, body)
			}
			if c.wantStatus == http.StatusOK && body != c.wantBody ||
				c.wantStatus != http.StatusOK && !strings.Contains(body, c.wantBody) {
				t.Fatalf("%s %s: body %q, want %q", method, c.path, body, c.wantBody)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Fatalf("Content-Type %q, want text/plain", ct)
			}
		})
	}
}

// TestHandlerNew checks status codes and messages of GET /new. Every case
// asks a fresh pod, so the shared handler's peer sets do not interfere:
// "solo" has one PD replica (the first ask bootstraps), "basic" has two.
func TestHandlerNew(t *testing.T) {
	t.Parallel()
	pd := newFakePD()
	d := New(testNamespace, "basic", newFakeClusters(newTC("solo", 1), newTC("basic", 2)), pd.client)
	h := NewHandler(d)
	solo := func(i int) string { return peerHost("solo", i) + ":2380" }
	soloInit := func(i int) string { return "--initial-cluster=solo-pd-" + strconv.Itoa(i) + "=http://" + solo(i) }
	runHTTPCases(t, h, []httpCase{
		{name: "bootstrap", path: "/new/" + b64(solo(0)), wantStatus: 200, wantBody: soloInit(0)},
		{name: "encoded with echo's newline", path: "/new/" + b64(solo(1)+"\n"), wantStatus: 200, wantBody: soloInit(1)},
		{name: "register type pd", path: "/new/" + b64(solo(2)) + "/pd", wantStatus: 200, wantBody: soloInit(2)},
		{name: "trailing slash", path: "/new/" + b64(solo(3)) + "/", wantStatus: 200, wantBody: soloInit(3)},
		{name: "PD not up yet", path: "/new/" + b64(peer(0)), wantStatus: 500, wantBody: "http://basic-pd.ns:2379: dial tcp"},
		{name: "register type dm", path: "/new/" + b64(solo(4)) + "/dm", wantStatus: 500, wantBody: "dm discovery is not configured"},
		{name: "unknown register type", path: "/new/" + b64(solo(4)) + "/tikv", wantStatus: 500, wantBody: `invalid register-type "tikv"`},
		{name: "bad base64", path: "/new/not-base64!", wantStatus: 400, wantBody: "is not standard base64"},
		{name: "empty segment", path: "/new/", wantStatus: 400, wantBody: "empty base64 segment"},
		{name: "blank value", path: "/new/" + b64(" \n"), wantStatus: 400, wantBody: "decodes to an empty value"},
		{name: "bad host shape", path: "/new/" + b64("basic-pd-0.basic-pd-peer.ns:2380"), wantStatus: 400,
			wantBody: "is not <pod>.<tc>-pd-peer.<namespace>.svc[.<domain>]:2380"},
		{name: "not a PD peer service", path: "/new/" + b64("basic-tikv-0.basic-tikv-peer.ns.svc:20160"), wantStatus: 400,
			wantBody: `service "basic-tikv-peer" is not a <tc>-pd-peer Service`},
		{name: "wrong namespace", path: "/new/" + b64("basic-pd-0.basic-pd-peer.other.svc:2380"), wantStatus: 400,
			wantBody: `peer namespace "other" is not the discovery namespace "ns"`},
		{name: "TidbCluster not found", path: "/new/" + b64("missing-pd-0.missing-pd-peer.ns.svc:2380"), wantStatus: 500,
			wantBody: `get TidbCluster ns/missing: tidbclusters.pingcap.com "missing" not found`},
		{name: "healthz", path: "/healthz", wantStatus: 200, wantBody: "ok"},
		{name: "unknown path", path: "/members", wantStatus: 404, wantBody: "not found: /members"},
		{name: "POST", method: http.MethodPost, path: "/new/" + b64(solo(4)), wantStatus: 405, wantBody: "method not allowed"},
	})
}

func TestHandlerVerify(t *testing.T) {
	t.Parallel()
	basic := newTC("basic", 3)
	basic.Status.PD.PeerMembers = map[string]v1alpha1.PDMember{
		"c": {Name: "c", ClientURL: "http://other-pd-2.other-pd-peer.ns.svc:2379", Health: true},
		"b": {Name: "b", ClientURL: "http://other-pd-1.other-pd-peer.ns.svc:2379"}, // unhealthy
		"a": {Name: "a", ClientURL: "http://other-pd-0.other-pd-peer.ns.svc:2379", Health: true},
	}
	hetero := newTC("hetero", 0)
	hetero.Spec.PD = nil
	hetero.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	hetero.Spec.Cluster = &v1alpha1.TidbClusterRef{Name: "target", Namespace: "other", ClusterDomain: "east.local"}
	clusters := newFakeClusters(basic, hetero)
	handler := func(tcName string) http.Handler {
		return NewHandler(New(testNamespace, tcName, clusters, newFakePD().client))
	}
	const others = "other-pd-0.other-pd-peer.ns.svc:2379,other-pd-2.other-pd-peer.ns.svc:2379"

	runHTTPCases(t, handler("basic"), []httpCase{
		{name: "URL plus healthy peer members", path: "/verify/" + b64("http://basic-pd:2379"), wantStatus: 200,
			wantBody: "http://basic-pd:2379,http://other-pd-0.other-pd-peer.ns.svc:2379,http://other-pd-2.other-pd-peer.ns.svc:2379"},
		{name: "without scheme", path: "/verify/" + b64("basic-pd:2379\n"), wantStatus: 200, wantBody: "basic-pd:2379," + others},
		{name: "bad base64", path: "/verify/!!!", wantStatus: 400, wantBody: "PD URL"},
	})
	runHTTPCases(t, handler("hetero"), []httpCase{
		{name: "no local PD: the target's peer Service", path: "/verify/" + b64("https://target-pd:2379"), wantStatus: 200,
			wantBody: "https://target-pd-peer.other.svc.east.local:2379"},
		{name: "no local PD, without scheme", path: "/verify/" + b64("target-pd:2379"), wantStatus: 200,
			wantBody: "target-pd-peer.other.svc.east.local:2379"},
	})
	runHTTPCases(t, handler("missing"), []httpCase{
		{name: "TidbCluster not found: the given URL", path: "/verify/" + b64("http://missing-pd:2379"), wantStatus: 200,
			wantBody: "http://missing-pd:2379"},
	})
}

func TestSplitNewPath(t *testing.T) {
	t.Parallel()
	// "?" encodes with "/" in the standard alphabet; such a value must not be
	// mistaken for {b64}/{registerType}.
	withSlash := b64("a??")
	if !strings.Contains(withSlash, "/") {
		t.Fatalf("test value %q has no slash", withSlash)
	}
	cases := []struct{ rest, wantURL, wantType string }{
		{withSlash, "a??", RegisterTypePD},
		{withSlash + "/dm", "a??", RegisterTypeDM},
		{b64("x") + "/pd", "x", RegisterTypePD},
	}
	for _, c := range cases {
		u, typ, err := splitNewPath(c.rest)
		if err != nil || u != c.wantURL || typ != c.wantType {
			t.Errorf("splitNewPath(%q) = %q, %q, %v; want %q, %q", c.rest, u, typ, err, c.wantURL, c.wantType)
		}
	}
}

// TestHandlerConcurrentBootstrap sends the first asks of a five-PD batch at
// once: exactly one pod (whichever completes the peer set) bootstraps, the
// others wait; once PD has that member, all of them join it, again at once.
func TestHandlerConcurrentBootstrap(t *testing.T) {
	t.Parallel()
	const replicas = 5
	e := newTestEnv(newTC("basic", replicas))
	srv := httptest.NewServer(NewHandler(e.d))
	defer srv.Close()

	askAll := func(pods []int) map[int]string {
		var (
			mu      sync.Mutex
			wg      sync.WaitGroup
			answers = map[int]string{}
		)
		for _, i := range pods {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, body := get(t, srv.URL+"/new/"+b64(peer(i)))
				mu.Lock()
				defer mu.Unlock()
				answers[i] = strconv.Itoa(status) + " " + body
			}()
		}
		wg.Wait()
		return answers
	}

	first := askAll([]int{0, 1, 2, 3, 4})
	boot := -1
	for i, a := range first {
		switch {
		case a == "200 "+initial(i):
			if boot >= 0 {
				t.Fatalf("both pod %d and pod %d bootstrap: %v", boot, i, first)
			}
			boot = i
		case !strings.HasPrefix(a, "500 "):
			t.Fatalf("pod %d: unexpected answer %q", i, a)
		}
	}
	if boot < 0 {
		t.Fatalf("no pod bootstraps: %v", first)
	}

	e.pd.setMembers(ownPD, podMember("basic", boot))
	var rest []int
	for i := range replicas {
		if i != boot {
			rest = append(rest, i)
		}
	}
	for i, a := range askAll(rest) {
		if want := "200 " + join(client(boot)); a != want {
			t.Errorf("pod %d: got %q, want %q", i, a, want)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec // test server URL
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}
