package tidbapi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// TiDB v8.5 answers.
const (
	tidbStatusJSON = `{"connections":0,"version":"8.0.11-TiDB-v8.5.0","git_hash":"d13e52ed6e22cc5789bed7c64c861578cd2ed55b","status":{"init_stats_percentage":100}}`
	tidbInfoJSON   = `{"is_owner":true,"max_procs":4,"gogc":100,"version":"8.0.11-TiDB-v8.5.0",
	  "git_hash":"d13e52ed6e22cc5789bed7c64c861578cd2ed55b","ddl_id":"5f3a6c2e-8f7d-4b1c-9d0e-3b2a1c0d9e8f",
	  "ip":"basic-tidb-0.basic-tidb-peer.ns.svc","listening_port":4000,"status_port":10080,"lease":"45s",
	  "binlog_status":"Off","start_timestamp":1717000000,"labels":{"zone":"z1"},"server_id":1234}`
)

// newTiDBPods serves per-pod handlers behind a proxy; a pod without a handler refuses the connection
// (the proxy answers 502, which is also ≥ 400).
func newTiDBPods(t *testing.T, pods map[string]http.HandlerFunc) tidbapi.HTTPClients {
	t.Helper()
	return podhttptest.Pods{PeerHost: "basic-tidb-peer.ns:10080", Paths: []string{"/status", "/info"}, Handlers: pods}.Serve(t)
}

func TestStatusURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		opts tidbapi.Options
		want string
	}{
		{tidbapi.Options{}, "http://basic-tidb-1.basic-tidb-peer.ns:10080"},
		{tidbapi.Options{TLSEnabled: true, ClusterDomain: "cluster.local"}, "https://basic-tidb-1.basic-tidb-peer.ns.svc.cluster.local:10080"},
	}
	for _, tc := range cases {
		if got := tidbapi.StatusURL("ns", "basic", "basic-tidb-1", tc.opts); got != tc.want {
			t.Errorf("StatusURL(%+v) = %q, want %q", tc.opts, got, tc.want)
		}
	}
}

func TestGetHealth(t *testing.T) {
	t.Parallel()
	clients := newTiDBPods(t, map[string]http.HandlerFunc{
		"basic-tidb-0": podhttptest.Answer(200, tidbStatusJSON),
		"basic-tidb-1": podhttptest.Answer(500, "not serving"),
		"basic-tidb-2": podhttptest.Answer(301, ""),
		"basic-tidb-3": podhttptest.BlockUntilCanceled,
	})
	c := tidbapi.NewClient(clients, 100*time.Millisecond)
	cases := map[string]bool{
		"basic-tidb-0": true,  // 200
		"basic-tidb-1": false, // 500
		"basic-tidb-2": true,  // < 400
		"basic-tidb-3": false, // times out
		"basic-tidb-9": false, // unreachable
	}
	for pod, want := range cases {
		got, err := c.GetHealth(context.Background(), "ns", "basic", pod, tidbapi.Options{})
		if err != nil || got != want {
			t.Errorf("GetHealth(%s) = %v, %v; want %v, nil", pod, got, err, want)
		}
	}
}

func TestGetHealthConnectionRefused(t *testing.T) {
	t.Parallel()
	refuse := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("connect: connection refused")
	}}
	c := tidbapi.NewClient(podhttptest.Plain(&http.Client{Transport: refuse}), 0)
	healthy, err := c.GetHealth(context.Background(), "ns", "basic", "basic-tidb-0", tidbapi.Options{})
	if healthy || err != nil {
		t.Errorf("GetHealth of a refused pod = %v, %v; want false, nil", healthy, err)
	}
	_, err = c.GetInfo(context.Background(), "ns", "basic", "basic-tidb-0", tidbapi.Options{})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("GetInfo of a refused pod: err = %v", err)
	}
}

func TestGetHealthErrors(t *testing.T) {
	t.Parallel()
	clients := newTiDBPods(t, map[string]http.HandlerFunc{"basic-tidb-0": podhttptest.BlockUntilCanceled})
	c := tidbapi.NewClient(clients, time.Minute)

	// An ended ctx is an error too: TestErrorsCarryStackAndCause.
	_, err := c.GetHealth(context.Background(), "ns", "basic", "basic-tidb-0", tidbapi.Options{TLSEnabled: true})
	if err == nil || !strings.Contains(err.Error(), "no TLS in this test") {
		t.Errorf("GetHealth without TLS material: err = %v", err)
	}
	shared := tidbapi.NewClient(pdapi.NewHTTPClientCache(nil), 0)
	_, err = shared.GetHealth(context.Background(), "ns", "basic", "basic-tidb-0", tidbapi.Options{TLSEnabled: true})
	if err == nil || !strings.Contains(err.Error(), "no TLS config source") {
		t.Errorf("GetHealth through the shared cache without TLS source: err = %v", err)
	}
}

func TestGetInfo(t *testing.T) {
	t.Parallel()
	var method atomic.Value
	clients := newTiDBPods(t, map[string]http.HandlerFunc{
		"basic-tidb-0": func(w http.ResponseWriter, r *http.Request) {
			method.Store(r.Method)
			_, _ = w.Write([]byte(tidbInfoJSON))
		},
		"basic-tidb-1": podhttptest.Answer(500, "internal error"),
		"basic-tidb-2": podhttptest.Answer(200, `{"is_owner": "yes"}`),
	})
	c := tidbapi.NewClient(clients, 0)
	info, err := c.GetInfo(context.Background(), "ns", "basic", "basic-tidb-0", tidbapi.Options{})
	if err != nil {
		t.Fatalf("GetInfo: %v", err)
	}
	if !info.IsOwner || info.Version != "8.0.11-TiDB-v8.5.0" || info.Labels["zone"] != "z1" || method.Load() != "POST" {
		t.Errorf("GetInfo = %+v (method %v)", info, method.Load())
	}
	for pod, want := range map[string]string{
		"basic-tidb-1": "POST http://basic-tidb-1.basic-tidb-peer.ns:10080/info: 500 Internal Server Error: internal error",
		"basic-tidb-2": "decode",
		"basic-tidb-9": "502 Bad Gateway",
	} {
		if _, err := c.GetInfo(context.Background(), "ns", "basic", pod, tidbapi.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("GetInfo(%s): err = %v, want it to mention %q", pod, err, want)
		}
	}
}

func TestGetHealthOfPodsIsBoundedAndConcurrent(t *testing.T) {
	t.Parallel()
	var (
		mu              sync.Mutex
		inFlight, peak  int
		release         = make(chan struct{})
		bothInFlight    = make(chan struct{})
		bothInFlightSet sync.Once
	)
	handler := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if inFlight == 2 {
			bothInFlightSet.Do(func() { close(bothInFlight) })
		}
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		podhttptest.Answer(200, tidbStatusJSON)(w, r)
	}
	pods := map[string]http.HandlerFunc{}
	names := []string{"basic-tidb-0", "basic-tidb-1", "basic-tidb-2", "basic-tidb-3", "basic-tidb-4"}
	for _, name := range names {
		pods[name] = handler
	}
	pods["basic-tidb-4"] = podhttptest.Answer(503, "starting")
	c := tidbapi.NewClient(newTiDBPods(t, pods), 0)

	go func() {
		<-bothInFlight // two checks run at once: the fan-out is concurrent
		close(release)
	}()
	got, err := tidbapi.GetHealthOfPods(context.Background(), c, "ns", "basic", names, tidbapi.Options{}, 2)
	if err != nil {
		t.Fatalf("GetHealthOfPods: %v", err)
	}
	want := map[string]bool{"basic-tidb-0": true, "basic-tidb-1": true, "basic-tidb-2": true, "basic-tidb-3": true, "basic-tidb-4": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetHealthOfPods (-want +got):\n%s", diff)
	}
	if peak > 2 {
		t.Errorf("%d checks ran at once, want at most 2", peak)
	}
}

func TestGetHealthOfPodsReportsErrors(t *testing.T) {
	t.Parallel()
	fake := tidbapi.NewFakeClient()
	errTLS := errors.New("no TLS material")
	fake.SetHealth("ns", "basic-tidb-1", false)
	fake.SetError("ns", "basic-tidb-2", errTLS)
	got, err := tidbapi.GetHealthOfPods(context.Background(), fake, "ns", "basic",
		[]string{"basic-tidb-0", "basic-tidb-1", "basic-tidb-2"}, tidbapi.Options{}, 0)
	if !errors.Is(err, errTLS) {
		t.Errorf("err = %v, want it to wrap %v", err, errTLS)
	}
	want := map[string]bool{"basic-tidb-0": true, "basic-tidb-1": false, "basic-tidb-2": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetHealthOfPods (-want +got):\n%s", diff)
	}
	if n := len(fake.Calls()); n != 3 {
		t.Errorf("fake recorded %d calls, want 3", n)
	}
}

func TestFakeClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := tidbapi.NewFakeClient()
	fake.SetInfo("ns", "basic-tidb-0", tidbapi.Info{IsOwner: true, Labels: map[string]string{"zone": "z1"}})
	info, err := fake.GetInfo(ctx, "ns", "basic", "basic-tidb-0", tidbapi.Options{TLSEnabled: true})
	if err != nil || !info.IsOwner {
		t.Errorf("GetInfo = %+v, %v", info, err)
	}
	info.Labels["zone"] = "changed"
	again, _ := fake.GetInfo(ctx, "ns", "basic", "basic-tidb-0", tidbapi.Options{})
	if again.Labels["zone"] != "z1" {
		t.Error("fake state leaked through a returned map")
	}
	if healthy, _ := fake.GetHealth(ctx, "other", "basic", "basic-tidb-0", tidbapi.Options{}); !healthy {
		t.Error("pods are healthy by default")
	}
	want := tidbapi.Call{Method: "GetInfo", Namespace: "ns", TCName: "basic", PodName: "basic-tidb-0", Options: tidbapi.Options{TLSEnabled: true}}
	if calls := fake.Calls(); len(calls) != 3 || calls[0] != want {
		t.Errorf("calls = %+v", calls)
	}
}
