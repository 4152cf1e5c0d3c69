package discovery

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// recordingPD is an httptest PD that records the requests it receives.
type recordingPD struct {
	mu    sync.Mutex
	hosts []string
	paths []string
}

func (p *recordingPD) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hosts = append(p.hosts, r.Host)
	p.paths = append(p.paths, r.URL.RequestURI())
	p.mu.Unlock()
	_, _ = w.Write([]byte("dashboard"))
}

func TestPDProxy(t *testing.T) {
	t.Parallel()
	pd := &recordingPD{}
	backend := httptest.NewServer(pd)
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := NewPDProxy(target, nil)

	rec := serve(h, http.MethodGet, "/dashboard/api/info?x=1")
	if rec.Code != http.StatusOK || rec.Body.String() != "dashboard" {
		t.Fatalf("/dashboard: %d %q, want 200 from PD", rec.Code, rec.Body.String())
	}
	rec = serve(h, http.MethodGet, "/pd/api/v1/members")
	if rec.Code != http.StatusNotFound {
		t.Fatalf("/pd/api/v1/members: status %d, want 404", rec.Code)
	}
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if len(pd.paths) != 1 || pd.paths[0] != "/dashboard/api/info?x=1" || pd.hosts[0] != target.Host {
		t.Fatalf("PD saw paths %v hosts %v, want only /dashboard/api/info?x=1 for host %s", pd.paths, pd.hosts, target.Host)
	}
}

func TestPDProxyUnreachable(t *testing.T) {
	t.Parallel()
	backend := httptest.NewServer(http.NotFoundHandler())
	target, _ := url.Parse(backend.URL)
	backend.Close() // nothing listens there any more
	rec := serve(NewPDProxy(target, nil), http.MethodGet, "/dashboard")
	if rec.Code != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", rec.Code)
	}
}

func TestPDProxyTarget(t *testing.T) {
	t.Parallel()
	tc := newTC("basic", 3)
	if got := PDProxyTarget(tc).String(); got != "http://basic-pd:2379" {
		t.Errorf("plain: %s", got)
	}
	tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	if got := PDProxyTarget(tc).String(); got != "https://basic-pd:2379" {
		t.Errorf("TLS: %s", got)
	}
}

func TestClusterPDProxy(t *testing.T) {
	t.Parallel()
	clusters := newFakeClusters()
	var targets []string
	transport := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		targets = append(targets, r.URL.String())
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	h := NewClusterPDProxy(clusters, testNamespace, "basic", transport)

	if rec := serve(h, http.MethodGet, "/dashboard/"); rec.Code != http.StatusServiceUnavailable ||
		!strings.Contains(rec.Body.String(), `"basic" not found`) {
		t.Fatalf("before the TidbCluster exists: %d %q, want 503 with the cause", rec.Code, rec.Body.String())
	}
	tc := newTC("basic", 3)
	tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	clusters.set(tc)
	if rec := serve(h, http.MethodGet, "/dashboard/"); rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", rec.Code)
	}
	if len(targets) != 1 || targets[0] != "https://basic-pd:2379/dashboard/" {
		t.Fatalf("forwarded to %v, want https://basic-pd:2379/dashboard/", targets)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
