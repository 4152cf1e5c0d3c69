package simulator

import (
	"encoding/json"
	"net/http"
	"time"
)

// trackPDReadiness follows every member's pd-server process: a new run (pod UID or restart count) starts
// now and is not ready; a run is ready PDReadyDelay after it started or the cluster bootstrapped,
// whichever is later, which readySince records.
func (c *Cluster) trackPDReadiness(now time.Time) {
	for _, m := range c.members {
		p, ok := c.podWithIdentity(m.ident)
		if !ok || !p.Running {
			m.run, m.startedAt, m.readySince = "", time.Time{}, time.Time{}
			continue
		}
		if run := tidbRun(p); run != m.run {
			m.run, m.startedAt, m.readySince = run, now, time.Time{}
		}
		if at, ok := c.pdReadyAt(m); ok && m.readySince.IsZero() && !now.Before(at) {
			m.readySince = at
			c.log.Info("PD member ready", "member", m.name, "at", at)
		}
	}
}

// pdReadyAt is when member m's current run answers ready: false while it does not run or the cluster is
// not bootstrapped.
func (c *Cluster) pdReadyAt(m *pdMember) (time.Time, bool) {
	if m.run == "" || !c.bootstrapped {
		return time.Time{}, false
	}
	from := m.startedAt
	if c.bootstrapAt.After(from) {
		from = c.bootstrapAt
	}
	return from.Add(c.timings().PDReadyDelay), true
}

// pdMemberReady reports whether m answers /pd/api/v2/ready with 200 at now; a member marked unhealthy
// through the admin API does not.
func (c *Cluster) pdMemberReady(m *pdMember, now time.Time) bool {
	at, ok := c.pdReadyAt(m)
	return ok && !now.Before(at) && !m.forcedUnhealthy
}

// handleReady is `GET /pd/api/v2/ready`, answered by the member itself: 500 until the cluster is
// bootstrapped and the member loaded its regions, then 200; the body is empty, or with `?verbose`
// `{"region_loaded":…}` as PD's gin handler renders it (compact when false, indented when true).
func handleReady(w http.ResponseWriter, r *http.Request, st *reqState) {
	m, ok := st.c.members[st.t.pod]
	ready := ok && st.c.pdMemberReady(m, st.now)
	status := http.StatusOK
	if !ready {
		status = http.StatusInternalServerError
	}
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		w.WriteHeader(status)
		return
	}
	body := struct {
		RegionLoaded bool `json:"region_loaded"`
	}{ready}
	data, _ := json.Marshal(body)
	if ready {
		data, _ = json.MarshalIndent(body, "", "    ")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// timePtr is t, or nil when zero, for the admin state.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
