//go:build bench

package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCountingProxyForwardsToTheSimulatorAsAProxy stands a recording
// server in for the simulator and sends requests as the operator does,
// through HTTP_PROXY.
func TestCountingProxyForwardsToTheSimulatorAsAProxy(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	sim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.RequestURI) // absolute form when sent to a proxy
		mu.Unlock()
		_, _ = io.WriteString(w, "ok "+r.Host)
	}))
	defer sim.Close()
	p, err := StartCountingProxy(sim.URL, "bench")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	for _, u := range []string{
		"http://db-pd.bench0001:2379/pd/api/v1/health",
		"http://db-pd.bench0001:2379/pd/api/v1/health",
		"http://db-tidb-0.db-tidb-peer.bench0002.svc:10080/status",
		"http://db-pd.bench0002:2379/pd/api/v1/stores?state=2",
	} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ok "+mustHost(t, u) {
			t.Fatalf("GET %s: %d %q", u, resp.StatusCode, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[2] != "http://db-tidb-0.db-tidb-peer.bench0002.svc:10080/status" {
		t.Errorf("the simulator got %q, want the absolute URL", seen[2])
	}
	want := map[ProxyKey]int{
		{Namespace: "bench0001", Component: "pd", Path: "/pd/api/v1/health"}: 2,
		{Namespace: "bench0002", Component: "tidb", Path: "/status"}:         1,
		{Namespace: "bench0002", Component: "pd", Path: "/pd/api/v1/stores"}: 1,
	}
	got := p.Snapshot()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"pd": 3, "tidb": 1}, byComponent(got)); diff != "" {
		t.Errorf("byComponent (-want +got):\n%s", diff)
	}
	before := map[ProxyKey]int{{Namespace: "bench0001", Component: "pd", Path: "/pd/api/v1/health"}: 2}
	if d := diffCounts(before, got); total(d) != 2 {
		t.Errorf("diffCounts = %v", d)
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestNamespaceAndComponentOfAHost(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"db-pd.bench0007":                           "bench0007",
		"db-tikv-0.db-tikv-peer.bench0007.svc":      "bench0007",
		"db-tidb-0.db-tidb-peer.bench0007.svc.k8s.": "bench0007",
		"elsewhere.example":                         "",
	}
	for host, want := range cases {
		if got := namespaceOf(host, "bench"); got != want {
			t.Errorf("namespaceOf(%q) = %q, want %q", host, got, want)
		}
	}
	for port, want := range map[string]string{"2379": "pd", "20180": "tikv", "20292": "tiflash", "10080": "tidb", "80": "other"} {
		if got := componentOf(port); got != want {
			t.Errorf("componentOf(%s) = %s, want %s", port, got, want)
		}
	}
}
