package simulator_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// put sends a PUT through the simulator's proxy and returns the status code.
func (e *env) put(t *testing.T, u string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(e.ctx, http.MethodPut, u, nil)
	resp, err := e.proxy.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// pumpNodes returns the Pump registry of default/basic through the admin client.
func (e *env) pumpNodes(t *testing.T) []api.PumpNode {
	t.Helper()
	st, err := e.admin.Cluster(e.ctx, "default", "basic")
	if err != nil {
		t.Fatal(err)
	}
	return st.PumpNodes
}

// step moves the fake clock and advances the registry.
func (e *env) step(d time.Duration) {
	e.clock.Step(d)
	e.reg.Tick()
}

func TestPumpNodesThroughTheAdminClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPods(simulator.ComponentPump, 2)
	nodes := e.pumpNodes(t)
	want := api.PumpNode{
		PodName: "basic-pump-1", NodeID: "basic-pump-1:8250", Host: "basic-pump-1.basic-pump:8250", State: "online",
		MaxCommitTS: nodes[1].UpdateTS, UpdateTS: nodes[1].UpdateTS, Serving: true, ProcessState: "online",
	}
	if len(nodes) != 2 || nodes[0].NodeID != "basic-pump-0:8250" || nodes[1] != want || want.UpdateTS == 0 {
		t.Fatalf("pump nodes = %+v, want the second %+v", nodes, want)
	}
	if sums, err := e.admin.Clusters(e.ctx); err != nil || len(sums) != 1 || sums[0].PumpNodes != 2 {
		t.Errorf("Clusters = %+v, %v", sums, err)
	}

	offline := api.Duration(10 * time.Second)
	tm, err := e.admin.SetTimings(e.ctx, api.TimingsUpdate{PumpOfflineTime: &offline})
	if err != nil || tm.PumpOfflineTime != offline || tm.TiCDCDrainTime != api.Duration(simulator.FastTimings().TiCDCDrainTime) {
		t.Fatalf("SetTimings = %+v, %v", tm, err)
	}
	if code := e.put(t, "http://basic-pump-0.basic-pump.default:8250/state/basic-pump-0:8250/close"); code != http.StatusOK {
		t.Fatalf("close = %d", code)
	}
	e.step(time.Duration(offline) / 2)
	if n := e.pumpNodes(t)[0]; n.State != "online" || n.ProcessState != "closing" {
		t.Fatalf("halfway: %+v", n)
	}
	e.step(time.Duration(offline) / 2)
	if n := e.pumpNodes(t)[0]; n.State != "offline" || n.Serving || n.ProcessState != "" {
		t.Fatalf("after the offline time: %+v", n)
	}

	// binlogctl update-pump: it sticks on a pump that does not run, a live pump heartbeats its own state back.
	if n, err := e.admin.SetPumpNodeState(e.ctx, "default", "basic", "basic-pump-0:8250", "paused"); err != nil || n.State != "paused" {
		t.Fatalf("SetPumpNodeState = %+v, %v", n, err)
	}
	if n, err := e.admin.SetPumpNodeState(e.ctx, "default", "basic", "basic-pump-1:8250", "offline"); err != nil || n.State != "offline" {
		t.Fatalf("SetPumpNodeState = %+v, %v", n, err)
	}
	e.step(time.Second)
	if nodes := e.pumpNodes(t); nodes[0].State != "paused" || nodes[1].State != "online" {
		t.Errorf("after a heartbeat: %+v", nodes)
	}

	var se *client.StatusError
	if _, err := e.admin.SetPumpNodeState(e.ctx, "default", "basic", "basic-pump-0:8250", "gone"); !asStatus(err, &se) || se.StatusCode != 400 {
		t.Errorf("unknown state = %v, want a 400", err)
	}
	for _, call := range []func() error{
		func() error {
			_, err := e.admin.SetPumpNodeState(e.ctx, "default", "basic", "basic-pump-7:8250", "offline")
			return err
		},
		func() error {
			_, err := e.admin.SetPumpNodeState(e.ctx, "default", "nope", "basic-pump-0:8250", "offline")
			return err
		},
	} {
		if err := call(); !client.IsNotFound(err) {
			t.Errorf("unknown node or cluster = %v, want a 404", err)
		}
	}
}

// TestFaultsMatchPump: faults select Pump's port like the other components.
func TestFaultsMatchPump(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPods(simulator.ComponentPump, 1)
	if _, err := e.admin.AddFault(e.ctx, "default", "basic", api.Fault{Kind: api.FaultError, Component: "pump", Status: 503, Body: "pump"}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://basic-pump-0.basic-pump.default:8250/status", "http://basic-pump.default.svc:8250/status"} {
		if code, body, err := e.get(t, u); err != nil || code != 503 || body != "pump" {
			t.Errorf("%s = %d %q, %v; want the pump fault", u, code, body, err)
		}
	}
	if code, _, err := e.get(t, storesURL); err != nil || code != http.StatusOK {
		t.Errorf("PD must not be hit by a Pump fault: %d, %v", code, err)
	}
}
