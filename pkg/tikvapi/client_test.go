package tikvapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tikvapi"
)

// newTiKVPods serves per-pod handlers of /metrics behind a proxy; a pod without a handler refuses the
// connection (the proxy answers 502).
func newTiKVPods(t *testing.T, pods map[string]http.HandlerFunc) tikvapi.HTTPClients {
	t.Helper()
	return podhttptest.Pods{PeerHost: "basic-tikv-peer.ns:20180", Paths: []string{"/metrics"}, Handlers: pods}.Serve(t)
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
		"basic-tikv-0": podhttptest.Answer(200, tikvMetrics),
		"basic-tikv-1": podhttptest.Answer(200, "process_cpu_seconds_total 1\n"),
		"basic-tikv-2": podhttptest.Answer(500, "internal error"),
		"basic-tikv-3": podhttptest.BlockUntilCanceled,
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
