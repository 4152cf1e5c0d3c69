package simulator

import (
	"net/http"
	"testing"
)

// TestTiDBUpgradeSwitch: POST /upgrade/start and /upgrade/finish switch the
// cluster's state with TiDB's answers (duplicates accepted), other methods
// and operations are 400, and the admin state records every request with
// the TiDB pods' versions.
func TestTiDBUpgradeSwitch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 2)
	url := func(pod, op string) string { return "http://" + pod + ".basic-tidb-peer.default:10080/upgrade/" + op }
	steps := []struct {
		method, pod, op string
		status          int
		body            string
	}{
		{http.MethodPost, "basic-tidb-0", "start", http.StatusOK, `"success!"`},
		{http.MethodPost, "basic-tidb-1", "start", http.StatusOK, `"It's a duplicated operation and the cluster is already in upgrading state."`},
		{http.MethodGet, "basic-tidb-0", "finish", http.StatusBadRequest, "This API only support POST method"},
		{http.MethodPost, "basic-tidb-0", "pause", http.StatusBadRequest, "wrong operation:pause"},
		{http.MethodPost, "basic-tidb-1", "finish", http.StatusOK, `"success!"`},
		{http.MethodPost, "basic-tidb-0", "finish", http.StatusOK, `"It's a duplicated operation and the cluster is already in normal state."`},
	}
	for i, s := range steps {
		r := h.proxy(s.method, url(s.pod, s.op), "")
		if r.status != s.status || r.body != s.body {
			t.Errorf("step %d %s %s on %s = %d %q, want %d %q", i, s.method, s.op, s.pod, r.status, r.body, s.status, s.body)
		}
	}
	h.with(func(c *Cluster) {
		up := c.snapshot(h.clock.Now()).TiDBUpgrade
		if up.Upgrading || len(up.Calls) != len(steps) {
			t.Fatalf("admin state %+v, want not upgrading after %d calls", up, len(steps))
		}
		first := up.Calls[0]
		if first.Op != "start" || first.Pod != "basic-tidb-0" || first.Seq != 1 || first.Versions["basic-tidb-1"] == "" {
			t.Errorf("first call %+v", first)
		}
	})
}
