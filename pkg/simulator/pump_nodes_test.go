package simulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// pumpAt sends a request to port 8250 of a Pump pod of the harness cluster through the proxy.
func (h *harness) pumpAt(pod, method, path string) response {
	h.t.Helper()
	return h.proxy(method, "http://"+pod+".basic-pump.default:8250"+path, "")
}

// pumpAction asks the pump of pod to apply action to its own node and decodes the answer.
func (h *harness) pumpAction(pod, action string) pumpResponse {
	h.t.Helper()
	r := h.pumpAt(pod, http.MethodPut, "/state/"+pod+":8250/"+action)
	wantStatus(h.t, r, http.StatusOK)
	return decode[pumpResponse](h.t, r)
}

// pumpStatus answers `GET /status` of the pump of pod, decoded.
func (h *harness) pumpStatus(pod string) pumpHTTPStatus {
	h.t.Helper()
	r := h.pumpAt(pod, http.MethodGet, "/status")
	wantStatus(h.t, r, http.StatusOK)
	return decode[pumpHTTPStatus](h.t, r)
}

// pumpNodes returns the Pump registry, as the admin API lists it, by pod name.
func (h *harness) pumpNodes() map[string]api.PumpNode {
	out := map[string]api.PumpNode{}
	h.with(func(c *Cluster) {
		for _, n := range c.pumpList() {
			out[n.PodName] = n
		}
	})
	return out
}

// wantPump fails unless the registry entry of pod has state and the pod's process serves as said.
func wantPump(t *testing.T, h *harness, pod, state string, serving bool) api.PumpNode {
	t.Helper()
	n, ok := h.pumpNodes()[pod]
	if !ok || n.State != state || n.Serving != serving {
		t.Fatalf("Pump node of %s = %+v (registered %v), want state %s serving %v", pod, n, ok, state, serving)
	}
	return n
}

// wantRefused fails unless a request to the pump of pod finds nothing listening.
func wantRefused(t *testing.T, h *harness, pod string) {
	t.Helper()
	if r := h.pumpAt(pod, http.MethodGet, "/status"); r.status != http.StatusBadGateway || !strings.Contains(r.body, "connection refused") {
		t.Fatalf("the pump of %s must refuse connections, got %d %q", pod, r.status, r.body)
	}
}

func TestPumpsRegisterOnlineOncePDIsReachable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPump, 2)
	if n := len(h.pumpNodes()); n != 0 {
		t.Fatalf("%d Pump nodes without PD, want none (Pump needs PD to start)", n)
	}
	wantRefused(t, h, "basic-pump-0")

	h.addPods(ComponentPD, 1)
	for _, pod := range []string{"basic-pump-0", "basic-pump-1"} {
		n := wantPump(t, h, pod, "online", true)
		if n.NodeID != pod+":8250" || n.Host != pod+".basic-pump:8250" || n.ProcessState != "online" || n.UpdateTS != tsoAt(t0) {
			t.Errorf("node = %+v", n)
		}
	}
	st := h.pumpStatus("basic-pump-1")
	if len(st.StatusMap) != 2 || st.StatusMap["basic-pump-0:8250"].State != "online" || st.ErrMsg != "" || st.CommitTS != tsoAt(t0) {
		t.Errorf("status = %+v", st)
	}

	// Online pumps heartbeat their TSOs.
	h.step(h.reg.Timings().PumpOfflineTime)
	if n := h.pumpNodes()["basic-pump-0"]; n.UpdateTS != tsoAt(h.clock.Now()) || n.MaxCommitTS != n.UpdateTS {
		t.Errorf("after a heartbeat: %+v, want TSO %d", n, tsoAt(h.clock.Now()))
	}
}

// TestPumpHostFollowsTheClusterDomain: the advertised address is the one the TiDB Operator's start script
// gives Pump, so the operator can find a pod's node by its host.
func TestPumpHostFollowsTheClusterDomain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.reg.Observe(h.key, ClusterObservation{
		Pods: []PodObservation{
			{Name: "basic-pd-0", Component: ComponentPD, Running: true, Ready: true, PVCUID: "pd"},
			{Name: "basic-pump-0", Component: ComponentPump, Running: true, Ready: true},
		},
		TidbCluster: &TidbClusterInfo{ClusterDomain: "cluster.local"},
	})
	if got, want := h.pumpNodes()["basic-pump-0"].Host, "basic-pump-0.basic-pump.default.svc.cluster.local:8250"; got != want {
		t.Errorf("host = %q, want %q", got, want)
	}
}

func TestPumpCloseGoesOfflineAfterTheOfflineTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 2)
	offline := h.reg.Timings().PumpOfflineTime

	if resp := h.pumpAction("basic-pump-1", "close"); resp.Code != 200 || resp.Message != "apply action close success!" {
		t.Fatalf("close = %+v", resp)
	}
	// Close stops the heartbeat before anything is written: the registry says online until the end.
	closing := wantPump(t, h, "basic-pump-1", "online", true)
	if closing.ProcessState != "closing" {
		t.Fatalf("process state = %q, want closing", closing.ProcessState)
	}
	if st := h.pumpStatus("basic-pump-1"); st.ErrMsg != "context canceled" || st.StatusMap != nil || st.CommitTS != 0 {
		t.Errorf("status of a closing pump = %+v, want its cancelled registry read", st)
	}
	if resp := h.pumpAction("basic-pump-1", "close"); resp.Code != 3 || resp.Message != "this pump's state is closing, apply close failed!" {
		t.Errorf("second close = %+v", resp)
	}

	h.step(offline / 2)
	wantPump(t, h, "basic-pump-1", "online", true)
	if n := h.pumpNodes()["basic-pump-1"]; n.UpdateTS != closing.UpdateTS {
		t.Errorf("a closing pump must not heartbeat: updateTS %d, was %d", n.UpdateTS, closing.UpdateTS)
	}
	h.step(offline - offline/2)
	n := wantPump(t, h, "basic-pump-1", "offline", false)
	if n.UpdateTS != tsoAt(h.clock.Now()) || n.ProcessState != "" {
		t.Errorf("offline node = %+v", n)
	}
	// The process exited; the pod still runs (its start script sleeps) but nothing listens.
	wantRefused(t, h, "basic-pump-1")
	if st := h.pumpStatus("basic-pump-0"); st.StatusMap["basic-pump-1:8250"].State != "offline" {
		t.Errorf("the other pump sees %+v", st.StatusMap["basic-pump-1:8250"])
	}
	h.step(offline)
	wantPump(t, h, "basic-pump-1", "offline", false)
}

func TestPumpClosingWaitsForPD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 1)
	offline := h.reg.Timings().PumpOfflineTime
	h.pumpAction("basic-pump-0", "close")
	h.with(func(c *Cluster) { c.pdUnreachable = true })
	h.step(2 * offline)
	if n := wantPump(t, h, "basic-pump-0", "online", true); n.ProcessState != "closing" {
		t.Fatalf("without PD the last fake binlog cannot be written, the pump must still be closing: %+v", n)
	}
	h.with(func(c *Cluster) { c.pdUnreachable = false })
	h.step(offline / 2)
	wantPump(t, h, "basic-pump-0", "online", true)
	h.step(offline - offline/2)
	wantPump(t, h, "basic-pump-0", "offline", false)
}

func TestPumpRegistersOnlineAgainWhenItsProcessRestarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 1)
	h.pumpAction("basic-pump-0", "close")
	h.step(h.reg.Timings().PumpOfflineTime)
	wantPump(t, h, "basic-pump-0", "offline", false)

	p := h.pods["basic-pump-0"]
	p.Restarts++
	h.setPod(p)
	if n := wantPump(t, h, "basic-pump-0", "online", true); n.NodeID != "basic-pump-0:8250" || len(h.pumpNodes()) != 1 {
		t.Fatalf("restarted pump = %+v, want the same node online", n)
	}

	h.pumpAction("basic-pump-0", "close")
	h.step(h.reg.Timings().PumpOfflineTime)
	p.UID = "recreated"
	h.setPod(p)
	wantPump(t, h, "basic-pump-0", "online", true)
	if st := h.pumpStatus("basic-pump-0"); st.StatusMap["basic-pump-0:8250"].State != "online" {
		t.Errorf("status after the pod was recreated = %+v", st)
	}
}

// TestDeletedPumpStaysOnlineInTheRegistry: nothing cleans the registry when a pump dies; the operator must
// take a pump offline before deleting its pod.
func TestDeletedPumpStaysOnlineInTheRegistry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 2)
	before := h.pumpNodes()["basic-pump-1"]
	h.deletePod("basic-pump-1")
	h.step(h.reg.Timings().PumpOfflineTime)
	if n := wantPump(t, h, "basic-pump-1", "online", false); n.UpdateTS != before.UpdateTS {
		t.Errorf("a dead pump must not heartbeat: %+v, was %+v", n, before)
	}
	wantRefused(t, h, "basic-pump-1")
	if st := h.pumpStatus("basic-pump-0"); st.StatusMap["basic-pump-1:8250"].State != "online" {
		t.Errorf("the live pump sees %+v", st.StatusMap["basic-pump-1:8250"])
	}

	// A pod that stops running (crash) is the same; it registers again when it runs.
	p := h.pods["basic-pump-0"]
	p.Running = false
	h.setPod(p)
	wantPump(t, h, "basic-pump-0", "online", false)
	p.Running = true
	h.setPod(p)
	wantPump(t, h, "basic-pump-0", "online", true)
}

func TestPumpPauseRegistersPausedAndExits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 1)
	if resp := h.pumpAction("basic-pump-0", "pause"); resp.Code != 200 || resp.Message != "apply action pause success!" {
		t.Fatalf("pause = %+v", resp)
	}
	wantPump(t, h, "basic-pump-0", "paused", false)
	wantRefused(t, h, "basic-pump-0")

	// Without PD the paused state cannot be written; the process exits all the same.
	p := h.pods["basic-pump-0"]
	p.Restarts++
	h.setPod(p)
	h.with(func(c *Cluster) { c.pdUnreachable = true })
	h.pumpAction("basic-pump-0", "pause")
	wantPump(t, h, "basic-pump-0", "online", false)
}

func TestPumpRefusesActionsAsPumpDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 2)
	for _, tc := range []struct{ path, msg string }{
		{"/state/basic-pump-1:8250/close", "invalide nodeID basic-pump-1:8250, this pump's nodeID is basic-pump-0:8250"},
		{"/state/basic-pump-0:8250/stop", "invalide action stop"},
		{"/state/basic-pump-0:8250/online", "invalide action online"},
	} {
		r := h.pumpAt("basic-pump-0", http.MethodPut, tc.path)
		wantStatus(t, r, http.StatusOK)
		if resp := decode[pumpResponse](t, r); resp.Code != 3 || resp.Message != tc.msg {
			t.Errorf("PUT %s = %+v, want code 3 %q", tc.path, resp, tc.msg)
		}
	}
	wantPump(t, h, "basic-pump-0", "online", true)
	wantPump(t, h, "basic-pump-1", "online", true)

	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/state/basic-pump-0:8250/close", http.StatusMethodNotAllowed},
		{http.MethodPut, "/status", http.StatusMethodNotAllowed},
		{http.MethodPut, "/state/basic-pump-0:8250", http.StatusNotFound},
		{http.MethodGet, "/drainers/x", http.StatusNotFound},
	} {
		if r := h.pumpAt("basic-pump-0", tc.method, tc.path); r.status != tc.status {
			t.Errorf("%s %s = %d %q, want %d", tc.method, tc.path, r.status, r.body, tc.status)
		}
	}
}

func TestPumpStatusWithoutPD(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 1)
	before := h.pumpNodes()["basic-pump-0"]
	h.with(func(c *Cluster) { c.pdUnreachable = true })
	h.step(h.reg.Timings().PumpOfflineTime)
	// The pump keeps serving; its registry read times out and its heartbeats do not land.
	if st := h.pumpStatus("basic-pump-0"); st.ErrMsg != "context deadline exceeded" || st.StatusMap != nil {
		t.Errorf("status without PD = %+v", st)
	}
	if n := wantPump(t, h, "basic-pump-0", "online", true); n.UpdateTS != before.UpdateTS {
		t.Errorf("heartbeat without PD: %+v, was %+v", n, before)
	}
}

func TestPumpServiceReachesAServingPump(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	svc := func() response { return h.proxy(http.MethodGet, "http://basic-pump.default.svc:8250/status", "") }
	h.addPods(ComponentTiKV, 1)
	if r := svc(); r.status != http.StatusBadGateway || !strings.Contains(r.body, "no endpoints") {
		t.Fatalf("Service without Pump pods = %d %q", r.status, r.body)
	}
	h.addPods(ComponentPump, 2)
	if r := svc(); r.status != http.StatusBadGateway || !strings.Contains(r.body, "connection refused") {
		t.Fatalf("Service of pumps waiting for PD = %d %q", r.status, r.body)
	}
	h.addPods(ComponentPD, 1)
	h.pumpAction("basic-pump-0", "close")
	// The closing pump answers /status with an error; the Service prefers the online one.
	r := svc()
	wantStatus(t, r, http.StatusOK)
	if st := decode[pumpHTTPStatus](t, r); st.ErrMsg != "" || len(st.StatusMap) != 2 {
		t.Errorf("status through the Service = %+v", st)
	}
	h.pumpAction("basic-pump-1", "pause")
	if st := decode[pumpHTTPStatus](t, svc()); st.ErrMsg != "context canceled" {
		t.Errorf("only the closing pump serves, got %+v", st)
	}
	h.step(h.reg.Timings().PumpOfflineTime)
	if r := svc(); r.status != http.StatusBadGateway || !strings.Contains(r.body, "connection refused") {
		t.Errorf("Service of exited pumps = %d %q", r.status, r.body)
	}
}
