package simulator

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// cdc sends a request to port 8301 of a TiCDC pod of the harness cluster through the proxy.
func (h *harness) cdc(pod, method, path, body string) response {
	h.t.Helper()
	return h.proxy(method, "http://"+pod+".basic-ticdc-peer.default:8301"+path, body)
}

// captures returns the registered captures by pod name.
func (h *harness) captures() map[string]api.Capture {
	out := map[string]api.Capture{}
	h.with(func(c *Cluster) {
		for _, cp := range c.captureList() {
			out[cp.PodName] = cp
		}
	})
	return out
}

// tables returns the table count of every capture by pod name.
func (h *harness) tables() map[string]int {
	out := map[string]int{}
	for pod, cp := range h.captures() {
		out[pod] = cp.Tables
	}
	return out
}

// owner returns the pod of the owner capture, "" when none.
func (h *harness) owner() string {
	for pod, cp := range h.captures() {
		if cp.Owner {
			return pod
		}
	}
	return ""
}

// drain asks TiCDC, through pod via, to drain the capture of pod target.
func (h *harness) drain(via, target string) response {
	h.t.Helper()
	return h.cdc(via, http.MethodPut, "/api/v1/captures/drain", `{"capture_id": "`+h.captures()[target].ID+`"}`)
}

func wantTables(t *testing.T, h *harness, want map[string]int) {
	t.Helper()
	got := h.tables()
	if len(got) != len(want) {
		t.Fatalf("tables = %v, want %v", got, want)
	}
	for pod, n := range want {
		if got[pod] != n {
			t.Fatalf("tables = %v, want %v", got, want)
		}
	}
}

// cdcErr decodes a TiCDC error body and checks its status and code.
func wantCDCError(t *testing.T, r response, status int, code, msg string) {
	t.Helper()
	wantStatus(t, r, status)
	e := decode[cdcHTTPError](t, r)
	if e.Code != code || e.Error != "["+code+"]"+msg {
		t.Fatalf("error = %+v, want code %s message %q", e, code, msg)
	}
}

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestCapturesNeedPDAndTheOldestIsOwner(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentTiCDC, 3)
	r := h.cdc("basic-ticdc-0", http.MethodGet, "/status", "")
	if r.status != http.StatusInternalServerError || r.body != "[CDC:ErrCaptureNotInitialized]capture has not been initialized yet" {
		t.Fatalf("/status without PD = %d %q", r.status, r.body)
	}
	wantCDCError(t, h.cdc("basic-ticdc-0", http.MethodGet, "/api/v1/captures", ""), http.StatusServiceUnavailable,
		"CDC:ErrServerIsNotReady", "cdc server is not ready")

	h.addPods(ComponentPD, 1)
	caps := h.captures()
	if len(caps) != 3 || h.owner() != "basic-ticdc-0" {
		t.Fatalf("captures = %+v, want 3 with basic-ticdc-0 the owner", caps)
	}
	for pod, cp := range caps {
		if !uuidShape.MatchString(cp.ID) || cp.Address != pod+".basic-ticdc-peer.default.svc:8301" || cp.Version != "v8.5.0" {
			t.Errorf("capture %s = %+v", pod, cp)
		}
	}
	wantTables(t, h, map[string]int{"basic-ticdc-0": 4, "basic-ticdc-1": 4, "basic-ticdc-2": 4})

	p := h.pods["basic-ticdc-2"]
	p.Running = false
	h.setPod(p)
	if r := h.cdc("basic-ticdc-2", http.MethodGet, "/status", ""); r.status != http.StatusBadGateway {
		t.Errorf("a TiCDC pod that does not run must refuse connections, got %d %q", r.status, r.body)
	}
	wantTables(t, h, map[string]int{"basic-ticdc-0": 6, "basic-ticdc-1": 6})
}

func TestCaptureIDIsPerRunOfTheProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 2)
	first := h.captures()
	ids := map[string]bool{first["basic-ticdc-0"].ID: true, first["basic-ticdc-1"].ID: true}
	// newID checks that the capture of pod has an ID never seen before, and the other capture kept its own.
	newID := func(step, pod, other string) {
		t.Helper()
		caps := h.captures()
		if ids[caps[pod].ID] || caps[other].ID != first[other].ID {
			t.Fatalf("%s: captures %+v, want a new ID for %s only", step, caps, pod)
		}
		ids[caps[pod].ID] = true
	}

	h.setReady("basic-ticdc-1", false)
	h.step(h.reg.Timings().TiCDCDrainTime)
	if got := h.captures()["basic-ticdc-1"].ID; got != first["basic-ticdc-1"].ID {
		t.Fatalf("readiness must not change the capture ID: %s, then %s", first["basic-ticdc-1"].ID, got)
	}

	p := h.pods["basic-ticdc-1"]
	p.Restarts++
	h.setPod(p)
	newID("container restart", "basic-ticdc-1", "basic-ticdc-0")

	p.UID = "recreated"
	h.setPod(p)
	newID("pod recreated", "basic-ticdc-1", "basic-ticdc-0")

	p.Running = false
	h.setPod(p)
	p.Running = true
	h.setPod(p)
	newID("pod stopped and started", "basic-ticdc-1", "basic-ticdc-0")

	// Losing PD ends every capture (TiCDC restarts when its etcd session expires).
	h.with(func(c *Cluster) { c.pdUnreachable = true })
	h.step(0)
	if n := len(h.captures()); n != 0 {
		t.Fatalf("%d captures without PD, want none", n)
	}
	h.with(func(c *Cluster) { c.pdUnreachable = false })
	h.step(0)
	for pod, cp := range h.captures() {
		if ids[cp.ID] {
			t.Errorf("capture of %s kept ID %s after PD came back", pod, cp.ID)
		}
	}
}

func TestOwnerIsReElectedWhenItGoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 3)
	h.deletePod("basic-ticdc-0")
	if h.owner() != "basic-ticdc-1" {
		t.Fatalf("owner = %q, want the oldest remaining capture", h.owner())
	}
	// The tables of a capture that went away are taken over at once.
	wantTables(t, h, map[string]int{"basic-ticdc-1": 6, "basic-ticdc-2": 6})

	h.addPods(ComponentTiCDC, 1)
	if h.owner() != "basic-ticdc-1" {
		t.Fatalf("a new capture must not take ownership, owner = %q", h.owner())
	}
	wantTables(t, h, map[string]int{"basic-ticdc-0": 0, "basic-ticdc-1": 6, "basic-ticdc-2": 6})
	h.step(h.reg.Timings().TiCDCDrainTime)
	wantTables(t, h, map[string]int{"basic-ticdc-0": 4, "basic-ticdc-1": 4, "basic-ticdc-2": 4})
}

func TestDrainMovesTablesWithinDrainTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 3)
	half := h.reg.Timings().TiCDCDrainTime / 2

	r := h.drain("basic-ticdc-2", "basic-ticdc-1") // a non-owner forwards it to the owner
	wantStatus(t, r, http.StatusAccepted)
	if r.body != `{"current_table_count":4}` {
		t.Fatalf("drain = %q", r.body)
	}
	if cp := h.captures()["basic-ticdc-1"]; !cp.Draining || cp.Tables != 4 {
		t.Fatalf("drained capture = %+v, want draining with its 4 tables still", cp)
	}
	h.step(half)
	wantTables(t, h, map[string]int{"basic-ticdc-0": 5, "basic-ticdc-1": 2, "basic-ticdc-2": 5})
	if n := decode[cdcDrainResponse](t, h.drain("basic-ticdc-0", "basic-ticdc-1")).CurrentTableCount; n != 2 {
		t.Fatalf("drain while draining = %d, want the current count 2", n)
	}
	h.step(half)
	wantTables(t, h, map[string]int{"basic-ticdc-0": 6, "basic-ticdc-1": 0, "basic-ticdc-2": 6})
	h.step(10 * half)
	wantTables(t, h, map[string]int{"basic-ticdc-0": 6, "basic-ticdc-1": 0, "basic-ticdc-2": 6})
	if n := decode[cdcDrainResponse](t, h.drain("basic-ticdc-0", "basic-ticdc-1")).CurrentTableCount; n != 0 {
		t.Fatalf("drain when drained = %d, want 0", n)
	}

	// A finished drain target is replaced by the next one and gets its share back.
	if n := decode[cdcDrainResponse](t, h.drain("basic-ticdc-0", "basic-ticdc-2")).CurrentTableCount; n != 6 {
		t.Fatalf("drain of the next capture = %d, want 6", n)
	}
	h.step(2 * half)
	wantTables(t, h, map[string]int{"basic-ticdc-0": 6, "basic-ticdc-1": 6, "basic-ticdc-2": 0})
}

func TestDrainIsRefusedAsTiCDCDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 1)
	wantCDCError(t, h.drain("basic-ticdc-0", "basic-ticdc-0"), http.StatusBadRequest,
		"CDC:ErrSchedulerRequestFailed", "scheduler request failed, only one capture alive")

	h.addPods(ComponentTiCDC, 3)
	h.step(h.reg.Timings().TiCDCDrainTime)
	put := func(body string) response {
		return h.cdc("basic-ticdc-1", http.MethodPut, "/api/v1/captures/drain", body)
	}
	wantCDCError(t, put(`{"capture_id": "nope"}`), http.StatusBadRequest, "CDC:ErrCaptureNotExist", "capture not exists, nope")
	wantCDCError(t, h.drain("basic-ticdc-1", "basic-ticdc-0"), http.StatusBadRequest,
		"CDC:ErrSchedulerRequestFailed", "scheduler request failed, cannot drain the owner")
	if r := put(`{"capture_id": 7}`); r.status != http.StatusBadRequest || decode[cdcHTTPError](t, r).Code != "CDC:ErrAPIInvalidParam" {
		t.Errorf("a malformed drain request = %d %s", r.status, r.body)
	}

	// While a drain is in progress, a drain of another capture is answered but ignored.
	wantStatus(t, h.drain("basic-ticdc-0", "basic-ticdc-1"), http.StatusAccepted)
	wantStatus(t, h.drain("basic-ticdc-0", "basic-ticdc-2"), http.StatusAccepted)
	if caps := h.captures(); !caps["basic-ticdc-1"].Draining || caps["basic-ticdc-2"].Draining {
		t.Errorf("captures = %+v, want only basic-ticdc-1 draining", caps)
	}

	h.with(func(c *Cluster) { c.cdcUnhealthy["basic-ticdc-2"] = true })
	wantCDCError(t, h.drain("basic-ticdc-0", "basic-ticdc-1"), http.StatusServiceUnavailable,
		"CDC:ErrSchedulerRequestFailed", "not all captures initialized")
}

func TestResignMovesOwnership(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 3)
	wantStatus(t, h.drain("basic-ticdc-0", "basic-ticdc-1"), http.StatusAccepted)
	h.step(h.reg.Timings().TiCDCDrainTime / 2)

	r := h.cdc("basic-ticdc-2", http.MethodPost, "/api/v1/owner/resign", "")
	if r.status != http.StatusAccepted || r.body != "" {
		t.Fatalf("resign = %d %q, want 202 without a body", r.status, r.body)
	}
	// The oldest other capture that is not being drained wins; the drain target lived in the old owner.
	if h.owner() != "basic-ticdc-2" || h.captures()["basic-ticdc-1"].Draining {
		t.Fatalf("after resign: %+v", h.captures())
	}
	if st := decode[cdcRootStatus](t, h.cdc("basic-ticdc-2", http.MethodGet, "/status", "")); !st.IsOwner {
		t.Errorf("/status of the new owner = %+v", st)
	}
	h.step(h.reg.Timings().TiCDCDrainTime)
	wantTables(t, h, map[string]int{"basic-ticdc-0": 4, "basic-ticdc-1": 4, "basic-ticdc-2": 4})

	h.deletePod("basic-ticdc-0")
	h.deletePod("basic-ticdc-1")
	id := h.captures()["basic-ticdc-2"].ID
	wantStatus(t, h.cdc("basic-ticdc-2", http.MethodPost, "/api/v1/owner/resign", ""), http.StatusAccepted)
	if h.owner() != "basic-ticdc-2" || h.captures()["basic-ticdc-2"].ID != id {
		t.Errorf("a sole capture that resigns must be elected again: %+v", h.captures())
	}
}

func TestUnhealthyCaptureStallsTheOwner(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 3)
	if r := h.cdc("basic-ticdc-1", http.MethodGet, "/api/v1/health", ""); r.status != http.StatusOK || r.body != "" {
		t.Fatalf("health = %d %q", r.status, r.body)
	}
	h.with(func(c *Cluster) { c.cdcUnhealthy["basic-ticdc-2"] = true })
	wantCDCError(t, h.cdc("basic-ticdc-1", http.MethodGet, "/api/v1/health", ""), http.StatusInternalServerError,
		"CDC:ErrClusterIsUnhealthy", "TiCDC cluster is unhealthy")
	if r := h.cdc("basic-ticdc-2", http.MethodGet, "/status", ""); r.status != http.StatusOK {
		t.Errorf("an unhealthy capture's process still answers /status, got %d", r.status)
	}

	// The owner schedules nothing: the tables of a capture that goes wait.
	h.deletePod("basic-ticdc-0")
	h.step(h.reg.Timings().TiCDCDrainTime)
	wantTables(t, h, map[string]int{"basic-ticdc-1": 4, "basic-ticdc-2": 4})
	h.with(func(c *Cluster) { delete(c.cdcUnhealthy, "basic-ticdc-2") })
	h.step(0)
	wantTables(t, h, map[string]int{"basic-ticdc-1": 6, "basic-ticdc-2": 6})
	wantStatus(t, h.cdc("basic-ticdc-1", http.MethodGet, "/api/v1/health", ""), http.StatusOK)
}

func TestTableCountFollowsTheClusterConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentTiCDC, 3)
	for _, tc := range []struct {
		tables int
		want   map[string]int
	}{
		{30, map[string]int{"basic-ticdc-0": 10, "basic-ticdc-1": 10, "basic-ticdc-2": 10}},
		{2, map[string]int{"basic-ticdc-0": 1, "basic-ticdc-1": 1, "basic-ticdc-2": 0}},
		{0, map[string]int{"basic-ticdc-0": 0, "basic-ticdc-1": 0, "basic-ticdc-2": 0}},
		{12, map[string]int{"basic-ticdc-0": 4, "basic-ticdc-1": 4, "basic-ticdc-2": 4}},
	} {
		h.with(func(c *Cluster) { c.ticdcTables = tc.tables })
		h.step(h.reg.Timings().TiCDCDrainTime)
		wantTables(t, h, tc.want)
	}
}
