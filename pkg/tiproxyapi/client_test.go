package tiproxyapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tiproxyapi"
)

// newTiProxyPods serves per-pod handlers of TiProxy's API behind a proxy; a pod without a handler
// refuses the connection (the proxy answers 502 as for a refused dial, which is also what a closing
// TiProxy answers: both are unhealthy), and another path is not found.
func newTiProxyPods(t *testing.T, pods map[string]http.HandlerFunc) tiproxyapi.HTTPClients {
	t.Helper()
	return podhttptest.Pods{PeerHost: "basic-tiproxy-peer.ns:3080",
		Paths: []string{tiproxyapi.HealthPath, tiproxyapi.ConfigPath}, Handlers: pods}.Serve(t)
}

func TestStatusURL(t *testing.T) {
	t.Parallel()
	if got := tiproxyapi.StatusURL("ns", "basic", "basic-tiproxy-1", tiproxyapi.Options{}); got != "http://basic-tiproxy-1.basic-tiproxy-peer.ns:3080" {
		t.Errorf("StatusURL = %q", got)
	}
	got := tiproxyapi.StatusURL("ns", "basic", "basic-tiproxy-1", tiproxyapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"})
	if got != "https://basic-tiproxy-1.basic-tiproxy-peer.ns.svc.cluster.local:3080" {
		t.Errorf("StatusURL with TLS and domain = %q", got)
	}
}

func TestGetHealth(t *testing.T) {
	t.Parallel()
	clients := newTiProxyPods(t, map[string]http.HandlerFunc{
		"basic-tiproxy-0": podhttptest.Answer(200, `{"config_checksum":3006078629}`),
		"basic-tiproxy-1": podhttptest.Answer(502, `{"config_checksum":3006078629}`),
		"basic-tiproxy-2": podhttptest.Answer(500, `"service not ready"`),
		"basic-tiproxy-3": podhttptest.Answer(200, `{"ConfigVersion":2}`), // TiProxy before the checksum
		"basic-tiproxy-4": podhttptest.Answer(503, "overloaded"),
		"basic-tiproxy-5": podhttptest.BlockUntilCanceled,
	})
	c := tiproxyapi.NewClient(clients, 100*time.Millisecond)
	for pod, want := range map[string]tiproxyapi.Health{
		"basic-tiproxy-0": {Healthy: true, ConfigChecksum: 3006078629, Body: `{"config_checksum":3006078629}`},
		"basic-tiproxy-1": {Reason: "shutting down (502)"},
		"basic-tiproxy-2": {Reason: "not ready yet (500 service not ready)"},
		"basic-tiproxy-3": {Healthy: true, Body: `{"ConfigVersion":2}`},
		"basic-tiproxy-4": {Reason: "503 Service Unavailable: overloaded"},
	} {
		got, err := c.GetHealth(context.Background(), "ns", "basic", pod, tiproxyapi.Options{})
		if err != nil {
			t.Errorf("GetHealth(%s): %v", pod, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GetHealth(%s) (-want +got):\n%s", pod, diff)
		}
	}
	for _, pod := range []string{"basic-tiproxy-5", "basic-tiproxy-9"} {
		got, err := c.GetHealth(context.Background(), "ns", "basic", pod, tiproxyapi.Options{})
		if err != nil || got.Healthy || got.Reason == "" {
			t.Errorf("GetHealth(%s) = %+v, %v; want unhealthy with a reason and no error", pod, got, err)
		}
	}
}

// TestGetHealthOperatorFailures: only the operator's own failures are errors, with a stack.
func TestGetHealthOperatorFailures(t *testing.T) {
	t.Parallel()
	clients := newTiProxyPods(t, map[string]http.HandlerFunc{"basic-tiproxy-0": podhttptest.Answer(200, "{}")})
	c := tiproxyapi.NewClient(clients, 0)
	_, err := c.GetHealth(context.Background(), "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{TLSEnabled: true})
	if err == nil || !strings.Contains(err.Error(), "no TLS in this test") {
		t.Errorf("without TLS material: err = %v", err)
	}
	if verbose := fmt.Sprintf("%+v", err); !strings.Contains(verbose, "tiproxyapi.(*client).GetHealth") {
		t.Errorf("error has no stack:\n%s", verbose)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.GetHealth(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: err = %v, want context.Canceled through the wrap", err)
	}
	shared := tiproxyapi.NewClient(pdapi.NewHTTPClientCache(nil), 0)
	_, err = shared.GetHealth(context.Background(), "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{TLSEnabled: true})
	if err == nil || !strings.Contains(err.Error(), "no TLS config source") {
		t.Errorf("through the shared cache without TLS source: err = %v", err)
	}
}

func TestGetConfig(t *testing.T) {
	t.Parallel()
	jsonAnswer := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "want format=json", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"workdir":"/var/lib/tiproxy/work","proxy":{"addr":"0.0.0.0:6000","pd-addrs":"basic-pd:2379",
"max-connections":100,"graceful-close-conn-timeout":15,"frontend-keepalive":{"enabled":true}},
"api":{"addr":"0.0.0.0:3080"},"labels":{"zone":"a"},"security":{"sql-tls":{"skip-ca":true}}}`))
	}
	clients := newTiProxyPods(t, map[string]http.HandlerFunc{
		"basic-tiproxy-0": jsonAnswer,
		// A TiProxy that ignores format answers TOML.
		"basic-tiproxy-1": podhttptest.Answer(200, "workdir = '/w'\n[proxy]\naddr = '0.0.0.0:6000'\ngraceful-wait-before-shutdown = 10\n[api]\naddr = '0.0.0.0:3080'\n"),
		"basic-tiproxy-2": podhttptest.Answer(500, `"can not get config"`),
		"basic-tiproxy-3": podhttptest.Answer(200, "{not json"),
	})
	c := tiproxyapi.NewClient(clients, 100*time.Millisecond)
	ctx := context.Background()
	got, err := c.GetConfig(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{})
	want := &tiproxyapi.Config{Workdir: "/var/lib/tiproxy/work",
		Proxy:  tiproxyapi.ProxyConfig{Addr: "0.0.0.0:6000", PDAddrs: "basic-pd:2379", MaxConnections: 100, GracefulCloseConnTimeout: 15},
		API:    tiproxyapi.APIConfig{Addr: "0.0.0.0:3080"},
		Labels: map[string]string{"zone": "a"}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("GetConfig JSON = %v (-want +got):\n%s", err, cmp.Diff(want, got))
	}
	got, err = c.GetConfig(ctx, "ns", "basic", "basic-tiproxy-1", tiproxyapi.Options{})
	want = &tiproxyapi.Config{Workdir: "/w", Proxy: tiproxyapi.ProxyConfig{Addr: "0.0.0.0:6000", GracefulWaitBeforeShutdown: 10},
		API: tiproxyapi.APIConfig{Addr: "0.0.0.0:3080"}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("GetConfig TOML = %v (-want +got):\n%s", err, cmp.Diff(want, got))
	}
	for pod, wantErr := range map[string]string{
		"basic-tiproxy-2": "tiproxy GetConfig basic-tiproxy-2: GET http://basic-tiproxy-2.basic-tiproxy-peer.ns:3080/api/admin/config/?format=json: 500 Internal Server Error",
		"basic-tiproxy-3": "decode",
		"basic-tiproxy-9": "502 Bad Gateway",
	} {
		_, err := c.GetConfig(ctx, "ns", "basic", pod, tiproxyapi.Options{})
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("GetConfig(%s): err = %v, want it to mention %q", pod, err, wantErr)
		}
		if verbose := fmt.Sprintf("%+v", err); !strings.Contains(verbose, "tiproxyapi.(*client).GetConfig") {
			t.Errorf("GetConfig(%s) error has no stack", pod)
		}
	}
}

func TestGetHealthOfPods(t *testing.T) {
	t.Parallel()
	fake := tiproxyapi.NewFakeClient()
	fake.SetUnhealthy("ns", "basic-tiproxy-1", "shutting down (502)")
	errTLS := errors.New("no TLS material")
	fake.SetError("ns", "basic-tiproxy-2", errTLS)
	pods := []string{"basic-tiproxy-0", "basic-tiproxy-1", "basic-tiproxy-2"}
	got, err := tiproxyapi.GetHealthOfPods(context.Background(), fake, "ns", "basic", pods, tiproxyapi.Options{}, 2)
	if !errors.Is(err, errTLS) {
		t.Errorf("err = %v, want the failed check's error", err)
	}
	if !got["basic-tiproxy-0"].Healthy || got["basic-tiproxy-1"].Healthy || got["basic-tiproxy-2"].Healthy {
		t.Errorf("health = %+v", got)
	}
	if got["basic-tiproxy-2"].Reason != errTLS.Error() {
		t.Errorf("failed check's reason = %q", got["basic-tiproxy-2"].Reason)
	}
	if n := len(fake.Calls()); n != 3 {
		t.Errorf("%d calls, want one per pod", n)
	}
}

func TestFakeClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := tiproxyapi.NewFakeClient()
	if h, err := fake.GetHealth(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{}); err != nil || !h.Healthy || h.Body != `{"config_checksum":0}` {
		t.Errorf("default health = %+v, %v", h, err)
	}
	fake.SetUnhealthy("ns", "basic-tiproxy-0", "")
	if h, _ := fake.GetHealth(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{}); h.Healthy || h.Reason != "unhealthy" {
		t.Errorf("unhealthy = %+v", h)
	}
	fake.SetHealthy("ns", "basic-tiproxy-0", 7)
	if h, _ := fake.GetHealth(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{}); !h.Healthy || h.ConfigChecksum != 7 {
		t.Errorf("healthy again = %+v", h)
	}
	labels := map[string]string{"zone": "a"}
	fake.SetConfig("ns", "basic-tiproxy-0", tiproxyapi.Config{Workdir: "/w", Labels: labels})
	labels["zone"] = "b"
	cfg, err := fake.GetConfig(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{TLSEnabled: true})
	if err != nil || cfg.Workdir != "/w" || cfg.Labels["zone"] != "a" {
		t.Errorf("GetConfig = %+v, %v", cfg, err)
	}
	errDown := errors.New("down")
	fake.SetError("ns", "basic-tiproxy-0", errDown)
	if _, err := fake.GetConfig(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{}); !errors.Is(err, errDown) {
		t.Errorf("injected error: %v", err)
	}
	if _, err := fake.GetHealth(ctx, "ns", "basic", "basic-tiproxy-0", tiproxyapi.Options{}); !errors.Is(err, errDown) {
		t.Errorf("injected error: %v", err)
	}
	want := tiproxyapi.Call{Method: "GetConfig", Namespace: "ns", TCName: "basic", PodName: "basic-tiproxy-0", Options: tiproxyapi.Options{TLSEnabled: true}}
	if calls := fake.Calls(); len(calls) != 6 || calls[3] != want {
		t.Errorf("calls = %+v", calls)
	}
}
