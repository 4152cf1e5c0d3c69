package simulator

import (
	"net/http"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

func (h *harness) leaderChanges() []api.LeaderChange {
	var out []api.LeaderChange
	h.with(func(c *Cluster) { out = c.leaderChangeList() })
	return out
}

// TestLeaderHistoryTellsTransfersFromElections moves leadership through
// PD's API, then restarts the leader's pod: the history names the first a
// transfer and the second an election, in order, and a transfer to the
// leader itself records nothing.
func TestLeaderHistoryTellsTransfersFromElections(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(3, 0, 0)
	start := len(h.leaderChanges())
	if r := h.pd(http.MethodPost, "/pd/api/v1/leader/transfer/basic-pd-2", ""); r.status != http.StatusOK {
		t.Fatalf("transfer = %d %q", r.status, r.body)
	}
	if r := h.pd(http.MethodPost, "/pd/api/v1/leader/transfer/basic-pd-2", ""); r.status != http.StatusOK {
		t.Fatalf("transfer to the leader = %d %q", r.status, r.body)
	}
	h.setReady("basic-pd-2", false) // the leader's pod restarts
	got := h.leaderChanges()[start:]
	want := []api.LeaderChange{
		{From: "basic-pd-0", To: "basic-pd-2", Cause: api.LeaderCauseTransfer},
		{From: "basic-pd-2", To: "basic-pd-0", Cause: api.LeaderCauseElection},
	}
	if len(got) != len(want) {
		t.Fatalf("leader changes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].From != want[i].From || got[i].To != want[i].To || got[i].Cause != want[i].Cause {
			t.Errorf("change %d = %+v, want %+v", i, got[i], want[i])
		}
		if i > 0 && got[i].Seq != got[i-1].Seq+1 {
			t.Errorf("change %d has seq %d after %d", i, got[i].Seq, got[i-1].Seq)
		}
	}
	var st api.ClusterState
	h.with(func(c *Cluster) { st = c.snapshot(h.clock.Now()) })
	if n := len(st.LeaderChanges); n == 0 || st.LeaderChanges[n-1].Cause != api.LeaderCauseElection {
		t.Errorf("admin state leaderChanges %+v does not end with the election", st.LeaderChanges)
	}
}

func TestLeaderHistoryRecordsQuorumLossAndIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	h.setReady("basic-pd-1", false)
	h.setReady("basic-pd-2", false)
	changes := h.leaderChanges()
	if last := changes[len(changes)-1]; last.Cause != api.LeaderCauseQuorumLost || last.To != "" {
		t.Errorf("last change %+v, want the quorum lost", last)
	}
	h.setReady("basic-pd-1", true)
	h.setReady("basic-pd-2", true)
	for i := 0; i < leaderHistoryLimit; i++ {
		to := "basic-pd-1"
		if i%2 == 1 {
			to = "basic-pd-2"
		}
		h.with(func(c *Cluster) {
			if err := c.transferLeader(to); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n := len(h.leaderChanges()); n != leaderHistoryLimit {
		t.Errorf("%d changes kept, want the latest %d", n, leaderHistoryLimit)
	}
}
