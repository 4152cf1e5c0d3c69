package tikvapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/tikvapi"
)

// proxied is an HTTPClients whose clients send every request to one httptest server acting as the
// HTTP proxy, which dispatches on the requested pod host, as the simulator does.
type proxied struct{ client *http.Client }

func (p proxied) Get(_, _ string, tlsEnabled bool) (*http.Client, error) {
	if tlsEnabled {
		return nil, errors.New("no TLS in this test")
	}
	return p.client, nil
}

func newTiKVPods(t *testing.T, pods map[string]http.HandlerFunc) tikvapi.HTTPClients {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pod, _, _ := strings.Cut(r.Host, ".")
		if r.URL.Path != "/metrics" || !strings.HasSuffix(r.Host, ".basic-tikv-peer.ns:20180") || pods[pod] == nil {
			http.Error(w, "dial "+r.Host+": connection refused", http.StatusBadGateway)
			return
		}
		pods[pod](w, r)
	}))
	t.Cleanup(proxy.Close)
	proxyURL, _ := url.Parse(proxy.URL)
	transport := pdapi.NewTransport(nil)
	transport.Proxy = http.ProxyURL(proxyURL)
	return proxied{client: &http.Client{Transport: transport, Timeout: 5 * time.Second}}
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

func TestMetricsURL(t *testing.T) {
	t.Parallel()
	if got := tikvapi.MetricsURL("ns", "basic", "basic-tikv-2", tikvapi.Options{}); got != "http://basic-tikv-2.basic-tikv-peer.ns:20180/metrics" {
		t.Errorf("MetricsURL = %q", got)
	}
	got := tikvapi.MetricsURL("ns", "basic", "basic-tikv-2", tikvapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"})
	if got != "https://basic-tikv-2.basic-tikv-peer.ns.svc.cluster.local:20180/metrics" {
		t.Errorf("MetricsURL with TLS and domain = %q", got)
	}
}

func TestGetLeaderCount(t *testing.T) {
	t.Parallel()
	clients := newTiKVPods(t, map[string]http.HandlerFunc{
		"basic-tikv-0": answer(200, tikvMetrics),
		"basic-tikv-1": answer(200, "process_cpu_seconds_total 1\n"),
		"basic-tikv-2": answer(500, "internal error"),
		"basic-tikv-3": func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	})
	c := tikvapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()

	count, err := c.GetLeaderCount(ctx, "ns", "basic", "basic-tikv-0", tikvapi.Options{})
	if err != nil || count != 34 {
		t.Errorf("GetLeaderCount = %d, %v; want 34", count, err)
	}
	_, err = c.GetLeaderCount(ctx, "ns", "basic", "basic-tikv-1", tikvapi.Options{})
	if !errors.Is(err, tikvapi.ErrLeaderCountNotFound) || !strings.Contains(err.Error(), "basic-tikv-1.basic-tikv-peer.ns:20180/metrics") {
		t.Errorf("missing metric: err = %v", err)
	}
	for pod, want := range map[string]string{
		"basic-tikv-2": "GET http://basic-tikv-2.basic-tikv-peer.ns:20180/metrics: 500 Internal Server Error: internal error",
		"basic-tikv-3": "context deadline exceeded",
		"basic-tikv-9": "502 Bad Gateway",
	} {
		if _, err := c.GetLeaderCount(ctx, "ns", "basic", pod, tikvapi.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GetLeaderCount(%s): err = %v, want it to mention %q", pod, err, want)
		}
	}
	if _, err := c.GetLeaderCount(ctx, "ns", "basic", "basic-tikv-0", tikvapi.Options{TLSEnabled: true}); err == nil {
		t.Error("GetLeaderCount without TLS material must fail")
	}
}

func TestFakeClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := tikvapi.NewFakeClient()
	fake.SetLeaderCount("ns", "basic-tikv-0", 12)
	errDown := errors.New("down")
	fake.SetError("ns", "basic-tikv-1", errDown)
	if n, err := fake.GetLeaderCount(ctx, "ns", "basic", "basic-tikv-0", tikvapi.Options{}); n != 12 || err != nil {
		t.Errorf("GetLeaderCount = %d, %v", n, err)
	}
	if _, err := fake.GetLeaderCount(ctx, "ns", "basic", "basic-tikv-1", tikvapi.Options{}); !errors.Is(err, errDown) {
		t.Errorf("injected error: %v", err)
	}
	fake.SetError("ns", "basic-tikv-1", nil)
	if n, err := fake.GetLeaderCount(ctx, "ns", "basic", "basic-tikv-1", tikvapi.Options{}); n != 0 || err != nil {
		t.Errorf("after clearing the error: %d, %v", n, err)
	}
	want := tikvapi.Call{Namespace: "ns", TCName: "basic", PodName: "basic-tikv-0"}
	if calls := fake.Calls(); len(calls) != 3 || calls[0] != want {
		t.Errorf("calls = %+v", calls)
	}
}
