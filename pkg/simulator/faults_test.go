package simulator_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// env is a simulator with one bootstrapped cluster default/basic (3 PD, 3 TiKV, 1 TiDB), served over a
// real listener, with a proxied HTTP client for the simulated APIs and the admin client.
type env struct {
	clock  *clocktesting.FakeClock
	reg    *simulator.Registry
	proxy  *http.Client
	admin  *client.Client
	pods   []simulator.PodObservation
	cancel context.CancelFunc
	ctx    context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2024, 5, 29, 0, 0, 0, 0, time.UTC))
	reg, err := simulator.NewRegistry(simulator.DefaultOptions(), clk, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(simulator.NewServer(reg, clk, logr.Discard()))
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	e := &env{
		clock: clk, reg: reg, ctx: ctx, cancel: cancel,
		proxy: &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}},
		admin: client.New(srv.URL, nil),
	}
	for _, c := range []struct {
		comp simulator.Component
		n    int
	}{{simulator.ComponentPD, 3}, {simulator.ComponentTiKV, 3}, {simulator.ComponentTiDB, 1}} {
		for i := 0; i < c.n; i++ {
			name := fmt.Sprintf("basic-%s-%d", c.comp, i)
			e.pods = append(e.pods, simulator.PodObservation{Name: name, Component: c.comp, Running: true, Ready: true, PVCUID: "u-" + name})
		}
	}
	reg.Observe(simulator.ClusterKey{Namespace: "default", Name: "basic"}, simulator.ClusterObservation{Pods: e.pods, HasPVCs: true})
	return e
}

func (e *env) get(t *testing.T, u string) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodGet, u, nil)
	resp, err := e.proxy.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

const storesURL = "http://basic-pd.default:2379/pd/api/v1/stores"

func TestErrorFaultExpiresAfterTimes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f, err := e.admin.AddFault(e.ctx, "default", "basic", api.Fault{
		Kind: api.FaultError, Method: "get", PathPrefix: "/pd/api/v1/stores", Status: 503, Body: "boom", Times: 2,
	})
	if err != nil || f.ID == "" || f.Method != "GET" {
		t.Fatalf("AddFault = %+v, %v", f, err)
	}
	for i := 0; i < 2; i++ {
		if status, body, err := e.get(t, storesURL); err != nil || status != 503 || body != "boom" {
			t.Fatalf("request %d = %d %q %v, want 503 boom", i, status, body, err)
		}
	}
	if status, _, err := e.get(t, storesURL); err != nil || status != 200 {
		t.Fatalf("after the fault expired = %d %v, want 200", status, err)
	}
	if status, _, _ := e.get(t, "http://basic-pd.default:2379/pd/api/v1/members"); status != 200 {
		t.Fatalf("a path outside the prefix = %d, want 200", status)
	}
	faults, err := e.admin.Faults(e.ctx, "default", "basic")
	if err != nil || len(faults) != 0 {
		t.Fatalf("faults after expiry = %+v, %v", faults, err)
	}
}

func TestLatencyFaultWaitsOnTheClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.AddFault(e.ctx, "default", "basic", api.Fault{
		Kind: api.FaultLatency, Component: "tikv", Delay: api.Duration(3 * time.Second),
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		status, _, _ := e.get(t, "http://basic-tikv-0.basic-tikv-peer.default:20180/metrics")
		done <- status
	}()
	waitFor(t, func() bool { return e.clock.HasWaiters() })
	select {
	case status := <-done:
		t.Fatalf("request finished (%d) before the clock moved", status)
	default:
	}
	e.clock.Step(3 * time.Second)
	select {
	case status := <-done:
		if status != 200 {
			t.Fatalf("delayed request = %d, want 200", status)
		}
	case <-e.ctx.Done():
		t.Fatal("delayed request never finished")
	}
}

func TestDropFaultClosesTheConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.admin.AddFault(e.ctx, "default", "basic", api.Fault{Kind: api.FaultDrop, Component: "pd", Times: 1}); err != nil {
		t.Fatal(err)
	}
	if status, _, err := e.get(t, storesURL); err == nil {
		t.Fatalf("dropped request answered %d, want a transport error", status)
	}
	if status, _, err := e.get(t, storesURL); err != nil || status != 200 {
		t.Fatalf("after the drop = %d %v", status, err)
	}
}

func TestPDUnreachable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.admin.SetPDUnreachable(e.ctx, "default", "basic", true); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{storesURL, "http://basic-pd-1.basic-pd-peer.default:2379/pd/api/v2/ready"} {
		if status, body, err := e.get(t, u); err != nil || status != 502 || !strings.Contains(body, "connection refused") {
			t.Errorf("GET %s while unreachable = %d %q %v", u, status, body, err)
		}
	}
	if status, _, _ := e.get(t, "http://basic-tidb-0.basic-tidb-peer.default:10080/status"); status != 200 {
		t.Errorf("TiDB while PD is only unreachable from outside = %d, want 200", status)
	}
	if err := e.admin.SetPDUnreachable(e.ctx, "default", "basic", false); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := e.get(t, storesURL); status != 200 {
		t.Errorf("after restoring = %d", status)
	}
}

func TestMemberUnhealthyAndStoreDownThroughTheClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.admin.SetMemberUnhealthy(e.ctx, "default", "basic", "basic-pd-0", true); err != nil {
		t.Fatal(err)
	}
	if err := e.admin.SetStoreDown(e.ctx, "default", "basic", 2, true); err != nil {
		t.Fatal(err)
	}
	st, err := e.admin.Cluster(e.ctx, "default", "basic")
	if err != nil {
		t.Fatal(err)
	}
	if st.Leader != "basic-pd-1" || st.Members[0].Healthy || !st.Members[0].ForcedUnhealthy || !st.Members[0].PodReady {
		t.Errorf("members = %+v leader %s", st.Members, st.Leader)
	}
	if st.Stores[1].StateName != pdapi.StoreStateNameDown || st.Stores[1].LeaderCount != 0 || !st.Stores[1].ForcedDown {
		t.Errorf("store 2 = %+v", st.Stores[1])
	}
	_, body, _ := e.get(t, "http://basic-pd.default:2379/pd/api/v1/health")
	if !strings.Contains(body, `"health": false`) {
		t.Errorf("health does not show the unhealthy member: %s", body)
	}
	if err := e.admin.SetStoreDown(e.ctx, "default", "basic", 2, false); err != nil {
		t.Fatal(err)
	}
	if st, _ = e.admin.Cluster(e.ctx, "default", "basic"); st.Stores[1].StateName != pdapi.StoreStateNameUp {
		t.Errorf("store 2 after clearing = %s", st.Stores[1].StateName)
	}
	for _, err := range []error{
		e.admin.SetMemberUnhealthy(e.ctx, "default", "basic", "nope", true),
		e.admin.SetStoreDown(e.ctx, "default", "basic", 99, true),
		e.admin.DeleteFault(e.ctx, "default", "basic", "42"),
		func() error { _, err := e.admin.Cluster(e.ctx, "default", "nope"); return err }(),
	} {
		if !client.IsNotFound(err) {
			t.Errorf("want a 404, got %v", err)
		}
	}
}

func TestInvalidFaultsAreRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, f := range []api.Fault{
		{Kind: api.FaultError, Status: 404},
		{Kind: api.FaultLatency},
		{Kind: "explode"},
		{Kind: api.FaultDrop, Component: "drainer"},
		{Kind: api.FaultDrop, PathPrefix: "pd/api"},
		{Kind: api.FaultDrop, Times: -1},
	} {
		var se *client.StatusError
		if _, err := e.admin.AddFault(e.ctx, "default", "basic", f); err == nil || !asStatus(err, &se) || se.StatusCode != 400 {
			t.Errorf("AddFault(%+v) = %v, want a 400", f, err)
		}
	}
}

func TestTimingsAndClusterConfigThroughTheClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	minute := api.Duration(time.Minute)
	got, err := e.admin.SetTimings(e.ctx, api.TimingsUpdate{MaxStoreDownTime: &minute})
	if err != nil || got.MaxStoreDownTime != minute || got.RegionMigrationTime != api.Duration(3*time.Second) {
		t.Fatalf("SetTimings = %+v, %v", got, err)
	}
	negative := api.Duration(-time.Second)
	if _, err := e.admin.SetTimings(e.ctx, api.TimingsUpdate{LeaderDrainTime: &negative}); err == nil {
		t.Error("negative timing accepted")
	}
	if tm, _ := e.admin.Timings(e.ctx); tm.MaxStoreDownTime != minute || tm.LeaderDrainTime != api.Duration(2*time.Second) {
		t.Errorf("Timings = %+v", tm)
	}
	five := uint64(5)
	cfg, err := e.admin.SetClusterConfig(e.ctx, "default", "basic", api.ClusterConfigUpdate{MaxReplicas: &five})
	if err != nil || cfg.MaxReplicas != 5 || cfg.RegionCount != 1000 {
		t.Fatalf("SetClusterConfig = %+v, %v", cfg, err)
	}
	if _, body, _ := e.get(t, "http://basic-pd.default:2379/pd/api/v1/config/replicate"); !strings.Contains(body, `"max-replicas": 5`) {
		t.Errorf("PD does not show max-replicas 5: %s", body)
	}
	list, err := e.admin.Clusters(e.ctx)
	if err != nil || len(list) != 1 || list[0].PDMembers != 3 || list[0].Stores != 3 || list[0].TiDBServers != 1 {
		t.Errorf("Clusters = %+v, %v", list, err)
	}
}

// waitFor polls cond every millisecond until it holds, failing after 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatal("condition not met within 10s")
		}
	}
}

func asStatus(err error, target **client.StatusError) bool { return errors.As(err, target) }
