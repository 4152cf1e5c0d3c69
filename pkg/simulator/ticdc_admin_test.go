package simulator_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// addPods adds n Running, Ready pods of comp to the env's cluster.
func (e *env) addPods(comp simulator.Component, n int) {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("basic-%s-%d", comp, i)
		e.pods = append(e.pods, simulator.PodObservation{Name: name, Component: comp, Running: true, Ready: true, UID: "uid-" + name})
	}
	e.reg.Observe(simulator.ClusterKey{Namespace: "default", Name: "basic"}, simulator.ClusterObservation{Pods: e.pods, HasPVCs: true})
}

func TestTiCDCAndTiProxyThroughTheAdminClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPods(simulator.ComponentTiCDC, 2)
	e.addPods(simulator.ComponentTiProxy, 1)

	st, err := e.admin.Cluster(e.ctx, "default", "basic")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Captures) != 2 || !st.Captures[0].Owner || st.Captures[0].PodName != "basic-ticdc-0" || st.Captures[1].Tables != 6 ||
		st.Captures[1].Address != "basic-ticdc-1.basic-ticdc-peer.default.svc:8301" || st.Config.TiCDCTables != 12 {
		t.Errorf("captures = %+v, config %+v", st.Captures, st.Config)
	}
	if want := []api.TiProxyServer{{Name: "basic-tiproxy-0", Running: true, Healthy: true}}; fmt.Sprint(st.TiProxyServers) != fmt.Sprint(want) {
		t.Errorf("TiProxy servers = %+v, want %+v", st.TiProxyServers, want)
	}
	if sums, err := e.admin.Clusters(e.ctx); err != nil || len(sums) != 1 || sums[0].TiCDCCaptures != 2 || sums[0].TiProxyServers != 1 {
		t.Errorf("Clusters = %+v, %v", sums, err)
	}

	const health = "http://basic-ticdc-1.basic-ticdc-peer.default:8301/api/v1/health"
	if err := e.admin.SetCaptureUnhealthy(e.ctx, "default", "basic", "basic-ticdc-1", true); err != nil {
		t.Fatal(err)
	}
	if code, _, err := e.get(t, health); err != nil || code != http.StatusInternalServerError {
		t.Errorf("TiCDC health with an unhealthy capture = %d, %v", code, err)
	}
	if st, _ := e.admin.Cluster(e.ctx, "default", "basic"); !st.Captures[1].ForcedUnhealthy {
		t.Errorf("capture not marked: %+v", st.Captures[1])
	}
	if err := e.admin.SetCaptureUnhealthy(e.ctx, "default", "basic", "basic-ticdc-1", false); err != nil {
		t.Fatal(err)
	}
	if code, _, err := e.get(t, health); err != nil || code != http.StatusOK {
		t.Errorf("TiCDC health after clearing = %d, %v", code, err)
	}

	if err := e.admin.SetTiProxyUnhealthy(e.ctx, "default", "basic", "basic-tiproxy-0", true); err != nil {
		t.Fatal(err)
	}
	if code, body, err := e.get(t, "http://basic-tiproxy-0.basic-tiproxy-peer.default:3080/api/debug/health"); err != nil || code != 500 {
		t.Errorf("unhealthy TiProxy = %d %q, %v", code, body, err)
	}
	if st, _ := e.admin.Cluster(e.ctx, "default", "basic"); st.TiProxyServers[0].Healthy || !st.TiProxyServers[0].ForcedUnhealthy {
		t.Errorf("TiProxy server = %+v", st.TiProxyServers[0])
	}

	for _, call := range []func() error{
		func() error { return e.admin.SetCaptureUnhealthy(e.ctx, "default", "basic", "basic-ticdc-7", true) },
		func() error { return e.admin.SetCaptureUnhealthy(e.ctx, "default", "basic", "basic-tikv-0", true) },
		func() error { return e.admin.SetTiProxyUnhealthy(e.ctx, "default", "basic", "basic-ticdc-0", false) },
		func() error { return e.admin.SetTiProxyUnhealthy(e.ctx, "default", "nope", "basic-tiproxy-0", true) },
	} {
		if err := call(); !client.IsNotFound(err) {
			t.Errorf("health mark of an unknown pod = %v, want a 404", err)
		}
	}
}

func TestTiCDCDrainTimeAndTablesThroughTheAdminClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPods(simulator.ComponentTiCDC, 3)
	drain := api.Duration(10 * time.Second)
	tm, err := e.admin.SetTimings(e.ctx, api.TimingsUpdate{TiCDCDrainTime: &drain})
	if err != nil || tm.TiCDCDrainTime != drain || tm.LeaderDrainTime != api.Duration(simulator.FastTimings().LeaderDrainTime) {
		t.Fatalf("SetTimings = %+v, %v", tm, err)
	}
	tables := 30
	cfg, err := e.admin.SetClusterConfig(e.ctx, "default", "basic", api.ClusterConfigUpdate{TiCDCTables: &tables})
	if err != nil || cfg.TiCDCTables != 30 {
		t.Fatalf("SetClusterConfig = %+v, %v", cfg, err)
	}
	e.clock.Step(time.Duration(drain))
	e.reg.Tick()
	st, _ := e.admin.Cluster(e.ctx, "default", "basic")
	for _, cp := range st.Captures {
		if cp.Tables != 10 {
			t.Errorf("capture %s holds %d tables, want 10 of 30", cp.PodName, cp.Tables)
		}
	}
	negative := -1
	if _, err := e.admin.SetClusterConfig(e.ctx, "default", "basic", api.ClusterConfigUpdate{TiCDCTables: &negative}); err == nil {
		t.Error("a negative table count must be refused")
	}
}

// TestFaultsMatchTiCDCAndTiProxy: faults select the new components like the others.
func TestFaultsMatchTiCDCAndTiProxy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPods(simulator.ComponentTiCDC, 1)
	e.addPods(simulator.ComponentTiProxy, 1)
	for _, comp := range []string{"ticdc", "tiproxy"} {
		if _, err := e.admin.AddFault(e.ctx, "default", "basic", api.Fault{Kind: api.FaultError, Component: comp, Status: 503, Body: comp}); err != nil {
			t.Fatal(err)
		}
	}
	for url, want := range map[string]string{
		"http://basic-ticdc-0.basic-ticdc-peer.default:8301/status":               "ticdc",
		"http://basic-tiproxy-0.basic-tiproxy-peer.default:3080/api/debug/health": "tiproxy",
	} {
		if code, body, err := e.get(t, url); err != nil || code != 503 || body != want {
			t.Errorf("%s = %d %q, %v; want the %s fault", url, code, body, err, want)
		}
	}
	if code, _, err := e.get(t, storesURL); err != nil || code != http.StatusOK {
		t.Errorf("PD must not be hit by TiCDC or TiProxy faults: %d, %v", code, err)
	}
}
