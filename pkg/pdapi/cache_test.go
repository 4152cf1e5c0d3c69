package pdapi_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func TestClientURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts pdapi.ClusterOptions
		want string
	}{
		{"service", pdapi.ClusterOptions{}, "http://basic-pd.ns1:2379"},
		{"service TLS", pdapi.ClusterOptions{TLSEnabled: true}, "https://basic-pd.ns1:2379"},
		{"service with domain", pdapi.ClusterOptions{ClusterDomain: "cluster.local"}, "http://basic-pd.ns1.svc.cluster.local:2379"},
		{"peer service", pdapi.ClusterOptions{PeerService: true, ClusterDomain: "c2.local"}, "http://basic-pd-peer.ns1.svc.c2.local:2379"},
		{"member", pdapi.ClusterOptions{Member: "basic-pd-1"}, "http://basic-pd-1.basic-pd-peer.ns1:2379"},
		{"member TLS with domain", pdapi.ClusterOptions{Member: "basic-pd-1", TLSEnabled: true, ClusterDomain: "cluster.local"},
			"https://basic-pd-1.basic-pd-peer.ns1.svc.cluster.local:2379"},
		{"member wins over peer service", pdapi.ClusterOptions{Member: "basic-pd-0", PeerService: true}, "http://basic-pd-0.basic-pd-peer.ns1:2379"},
		{"verbatim client URL", pdapi.ClusterOptions{ClientURL: "https://pd-0.pd-peer.other.svc.c3.local:2379/", TLSEnabled: true},
			"https://pd-0.pd-peer.other.svc.c3.local:2379"},
	}
	for _, tc := range cases {
		if got := pdapi.ClientURL("ns1", "basic", tc.opts); got != tc.want {
			t.Errorf("%s: ClientURL = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestControlCachesPerClusterMemberAndTLS(t *testing.T) {
	t.Parallel()
	control := pdapi.NewControl(func(_, _ string) (*tls.Config, error) {
		return &tls.Config{MinVersion: tls.VersionTLS12}, nil
	}, 0)
	get := func(ns, tc string, opts pdapi.ClusterOptions) pdapi.Client { return control.GetPDClient(ns, tc, opts) }

	base := get("ns", "basic", pdapi.ClusterOptions{})
	if get("ns", "basic", pdapi.ClusterOptions{}) != base {
		t.Error("same cluster must return the cached client")
	}
	distinct := map[string]pdapi.Client{
		"other namespace": get("ns2", "basic", pdapi.ClusterOptions{}),
		"other cluster":   get("ns", "other", pdapi.ClusterOptions{}),
		"member":          get("ns", "basic", pdapi.ClusterOptions{Member: "basic-pd-0"}),
		"domain":          get("ns", "basic", pdapi.ClusterOptions{ClusterDomain: "cluster.local"}),
		"peer service":    get("ns", "basic", pdapi.ClusterOptions{PeerService: true}),
		"client URL":      get("ns", "basic", pdapi.ClusterOptions{ClientURL: "http://x:2379"}),
	}
	for name, c := range distinct {
		if c == base {
			t.Errorf("%s: got the cluster's client, want a distinct one", name)
		}
	}
	if get("ns", "basic", pdapi.ClusterOptions{Member: "basic-pd-0"}) != distinct["member"] {
		t.Error("same member must return the cached member client")
	}

	secure := get("ns", "basic", pdapi.ClusterOptions{TLSEnabled: true})
	if secure == base || get("ns", "basic", pdapi.ClusterOptions{TLSEnabled: true}) != secure {
		t.Error("TLS client must be distinct from the plain one, and cached")
	}
	if get("ns", "basic", pdapi.ClusterOptions{}) == base {
		t.Error("after the TLS setting flipped, the plain client must be rebuilt")
	}
}

func TestControlTLSLoadFailure(t *testing.T) {
	t.Parallel()
	errNoSecret := errors.New(`secret "basic-cluster-client-secret" not found`)
	var loads atomic.Int32
	control := pdapi.NewControl(func(_, _ string) (*tls.Config, error) {
		loads.Add(1)
		return nil, errNoSecret
	}, time.Second)
	opts := pdapi.ClusterOptions{TLSEnabled: true}
	_, err := control.GetPDClient("ns", "basic", opts).GetHealth(context.Background())
	assertError(t, err, errNoSecret, 0, "GetHealth", "https://basic-pd.ns:2379/pd/api/v1/health", "load client TLS config for ns/basic")
	var tlsErr *pdapi.TLSConfigError
	if !errors.As(err, &tlsErr) || tlsErr.TCName != "basic" || !strings.Contains(tlsErr.Error(), "basic-cluster-client-secret") {
		t.Errorf("GetHealth error %v does not unwrap to a TLSConfigError naming the Secret", err)
	}
	_, _ = control.GetPDClient("ns", "basic", opts).GetMembers(context.Background())
	if n := loads.Load(); n != 2 {
		t.Errorf("TLS config loaded %d times, want 2 (a failed load is not cached)", n)
	}

	_, err = pdapi.NewControl(nil, 0).GetPDClient("ns", "basic", opts).GetStores(context.Background())
	assertError(t, err, nil, 0, "no TLS config source is configured")
}

func TestControlTLSRoundTrip(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "tidb-operator" {
			http.Error(w, "no client certificate", http.StatusForbidden)
			return
		}
		if !r.Close {
			http.Error(w, "keep-alive must be disabled with TLS", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(pdHealthJSON))
	}))
	ts.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS12}
	ts.StartTLS()
	t.Cleanup(ts.Close)

	cfg, err := pdapi.TLSConfigFromSecretData(clientSecretData(t, ts))
	check(t, "TLSConfigFromSecretData", err)
	control := pdapi.NewControl(func(ns, tc string) (*tls.Config, error) {
		if ns != "ns" || tc != "basic" {
			return nil, errors.New("wrong cluster")
		}
		return cfg, nil
	}, 5*time.Second)
	health, err := control.GetPDClient("ns", "basic", pdapi.ClusterOptions{TLSEnabled: true, ClientURL: ts.URL}).
		GetHealth(context.Background())
	check(t, "GetHealth over TLS", err)
	if len(health) != 2 {
		t.Errorf("GetHealth over TLS = %+v", health)
	}
}

func TestTLSConfigFromSecretDataErrors(t *testing.T) {
	t.Parallel()
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	good := clientSecretData(t, ts)
	otherCert, _ := newClientCertPEM(t)
	cases := []struct {
		name   string
		mutate func(map[string][]byte)
		want   string
	}{
		{"no CA", func(d map[string][]byte) { delete(d, "ca.crt") }, `no "ca.crt"`},
		{"no key", func(d map[string][]byte) { d["tls.key"] = nil }, `no "tls.key"`},
		{"CA not PEM", func(d map[string][]byte) { d["ca.crt"] = []byte("garbage") }, "no PEM certificate in ca.crt"},
		{"key does not match cert", func(d map[string][]byte) { d["tls.crt"] = otherCert }, "tls.crt/tls.key"},
	}
	for _, tc := range cases {
		data := map[string][]byte{}
		for k, v := range good {
			data[k] = v
		}
		tc.mutate(data)
		_, err := pdapi.TLSConfigFromSecretData(data)
		if err == nil {
			t.Errorf("%s: want error", tc.name)
			continue
		}
		assertError(t, err, nil, 0, tc.want)
	}
	if got := pdapi.ClusterClientTLSSecretName("basic"); got != "basic-cluster-client-secret" {
		t.Errorf("ClusterClientTLSSecretName = %q", got)
	}
}

// TestClientThroughHTTPProxy shows how tests reach a PD simulator: the client asks for the cluster DNS
// name and the proxy receives the absolute-form request.
func TestClientThroughHTTPProxy(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.String() != "http://basic-pd.ns:2379/pd/api/v1/leader" || r.Host != "basic-pd.ns:2379" {
			http.Error(w, "unexpected proxy request "+r.URL.String(), http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(pdLeaderJSON))
	}))
	t.Cleanup(proxy.Close)
	proxyURL, err := url.Parse(proxy.URL)
	check(t, "parse proxy URL", err)

	transport := pdapi.NewTransport(nil)
	if transport.Proxy == nil || transport.DisableKeepAlives {
		t.Fatal("NewTransport must honour the proxy environment and keep plain connections alive")
	}
	transport.Proxy = http.ProxyURL(proxyURL) // ProxyFromEnvironment caches the environment once per process
	httpClient := &http.Client{Timeout: 5 * time.Second, Transport: transport}
	c := pdapi.NewClientWithHTTP(pdapi.ClientURL("ns", "basic", pdapi.ClusterOptions{}), httpClient)
	leader, err := c.GetLeader(context.Background())
	check(t, "GetLeader through proxy", err)
	if leader.Name != "basic-pd-0" {
		t.Errorf("GetLeader through proxy = %+v", leader)
	}
	if !pdapi.NewTransport(&tls.Config{MinVersion: tls.VersionTLS12}).DisableKeepAlives {
		t.Error("a TLS transport must disable keep-alive")
	}
}
