package simulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"
)

// t0 is the fake clock's start.
var t0 = time.Date(2024, 5, 29, 16, 26, 40, 0, time.UTC)

// harness drives one simulated cluster "default/basic" with a fake clock and hand-made observations.
type harness struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	reg   *Registry
	srv   *Server
	key   ClusterKey
	pods  map[string]PodObservation
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	reg, err := NewRegistry(DefaultOptions(), clk, logr.Discard())
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	return &harness{
		t: t, clock: clk, reg: reg, srv: NewServer(reg, clk, logr.Discard()),
		key: ClusterKey{Namespace: "default", Name: "basic"}, pods: map[string]PodObservation{},
	}
}

// addPods adds n Running, Ready pods <tc>-<comp>-0..n-1 with PVC UID "uid-<pod>", then observes.
func (h *harness) addPods(comp Component, n int) {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%s-%d", h.key.Name, comp, i)
		h.pods[name] = PodObservation{Name: name, Component: comp, Running: true, Ready: true, PVCUID: "uid-" + name}
	}
	h.observe()
}

// setPod replaces one pod (by name) and observes.
func (h *harness) setPod(p PodObservation) {
	h.pods[p.Name] = p
	h.observe()
}

// setReady changes a pod's readiness and observes.
func (h *harness) setReady(name string, ready bool) {
	p, ok := h.pods[name]
	if !ok {
		h.t.Fatalf("no pod %s", name)
	}
	p.Ready = ready
	h.setPod(p)
}

// deletePod removes a pod and observes.
func (h *harness) deletePod(name string) {
	delete(h.pods, name)
	h.observe()
}

func (h *harness) observe() {
	obs := ClusterObservation{HasPVCs: true}
	for _, p := range h.pods {
		obs.Pods = append(obs.Pods, p)
	}
	sort.Slice(obs.Pods, func(i, j int) bool { return obs.Pods[i].Name < obs.Pods[j].Name })
	h.reg.Observe(h.key, obs)
}

// bootstrap starts pd PD, kv TiKV and db TiDB pods and lets leaders balance.
func (h *harness) bootstrap(pd, kv, db int) {
	h.addPods(ComponentPD, pd)
	h.addPods(ComponentTiKV, kv)
	h.addPods(ComponentTiDB, db)
	h.step(h.reg.Timings().LeaderReturnTime)
}

// step moves the fake clock and ticks the registry, as the simulator's ticker would.
func (h *harness) step(d time.Duration) {
	h.clock.Step(d)
	h.reg.Tick()
}

// with runs fn on the cluster under the registry lock, failing when it does not exist.
func (h *harness) with(fn func(c *Cluster)) {
	h.t.Helper()
	if !h.reg.withCluster(h.key, false, fn) {
		h.t.Fatalf("cluster %s does not exist", h.key)
	}
}

// storeState returns the state PD reports for store id.
func (h *harness) storeState(id uint64) string {
	var name string
	h.with(func(c *Cluster) {
		s, ok := c.stores[id]
		if !ok {
			h.t.Fatalf("no store %d", id)
		}
		name = c.stateName(s, h.clock.Now())
	})
	return name
}

// leaders returns the leader count of every store by ID.
func (h *harness) leaders() map[uint64]int {
	out := map[uint64]int{}
	h.with(func(c *Cluster) {
		for id, s := range c.stores {
			out[id] = s.leaders
		}
	})
	return out
}

// response is a recorded HTTP answer.
type response struct {
	status int
	header http.Header
	body   string
}

// proxy sends a proxy-form request (absolute URL) through the server, as an HTTP_PROXY client does.
func (h *harness) proxy(method, url, body string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, url, rd)
	if !req.URL.IsAbs() {
		h.t.Fatalf("proxy request %s is not in absolute form", url)
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// pd sends a request to the cluster's PD client Service.
func (h *harness) pd(method, path, body string) response {
	h.t.Helper()
	return h.proxy(method, "http://basic-pd.default:2379"+path, body)
}

// decode unmarshals a response body, failing the test on error.
func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
	return v
}

// wantStatus fails unless r has status.
func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.status, status, r.body)
	}
}
