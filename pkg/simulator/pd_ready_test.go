package simulator

import (
	"net/http"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// TestPDReadyAfterBootstrapAndDelay: /pd/api/v2/ready answers 500 before bootstrap and until PDReadyDelay
// after the later of the member's start and the bootstrap; the admin state records readySince.
func TestPDReadyAfterBootstrapAndDelay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	delay := h.reg.Timings().PDReadyDelay
	ready := "http://basic-pd-0.basic-pd-peer.default.svc:2379/pd/api/v2/ready"
	h.addPods(ComponentPD, 2)
	h.step(10 * delay)
	r := h.proxy(http.MethodGet, ready+"?verbose", "")
	if r.status != http.StatusInternalServerError || r.body != `{"region_loaded":false}` ||
		r.header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("ready before bootstrap = %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	if r := h.proxy(http.MethodGet, ready, ""); r.status != http.StatusInternalServerError || r.body != "" {
		t.Fatalf("ready before bootstrap = %d %q, want 500 and no body", r.status, r.body)
	}
	h.addPods(ComponentTiKV, 1)
	bootstrapAt := h.clock.Now()
	h.step(delay / 2)
	wantStatus(t, h.proxy(http.MethodGet, ready, ""), http.StatusInternalServerError)
	h.step(delay / 2)
	wantStatus(t, h.proxy(http.MethodGet, ready, ""), http.StatusOK)
	if m := h.member("basic-pd-0"); m.ReadySince == nil || !m.ReadySince.Equal(bootstrapAt.Add(delay)) {
		t.Errorf("readySince = %v, want bootstrap + delay %v", m.ReadySince, bootstrapAt.Add(delay))
	}

	p := h.pods["basic-pd-0"]
	p.Restarts++ // the container restarted: a new pd-server process
	h.setPod(p)
	restartedAt := h.clock.Now()
	wantStatus(t, h.proxy(http.MethodGet, ready, ""), http.StatusInternalServerError)
	if m := h.member("basic-pd-0"); m.ReadySince != nil || m.StartedAt == nil || !m.StartedAt.Equal(restartedAt) {
		t.Errorf("after the restart startedAt = %v readySince = %v, want %v and none", m.StartedAt, m.ReadySince, restartedAt)
	}
	h.step(delay)
	wantStatus(t, h.proxy(http.MethodGet, ready, ""), http.StatusOK)
	if m := h.member("basic-pd-0"); m.ReadySince == nil || !m.ReadySince.Equal(restartedAt.Add(delay)) {
		t.Errorf("readySince = %v, want restart + delay", m.ReadySince)
	}
	if m := h.member("basic-pd-1"); m.ReadySince == nil || !m.ReadySince.Equal(bootstrapAt.Add(delay)) {
		t.Errorf("the other member's readySince = %v, want bootstrap + delay", m.ReadySince)
	}
}

// member returns the admin state of PD member name.
func (h *harness) member(name string) api.Member {
	h.t.Helper()
	var out api.Member
	h.with(func(c *Cluster) {
		for _, m := range c.snapshot(h.clock.Now()).Members {
			if m.Name == name {
				out = m
				return
			}
		}
		h.t.Fatalf("no member %s", name)
	})
	return out
}
