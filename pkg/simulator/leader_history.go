package simulator

import "github.com/kubetidb/tidb-operator/pkg/simulator/api"

// leaderHistoryLimit bounds the leader changes a cluster keeps (the latest ones).
const leaderHistoryLimit = 64

// leaderHistory records the changes of a cluster's PD leader with their cause: a transfer through PD's API
// and an election after the leader's pod stopped both end with a new leader, and only the history tells them
// apart (the PD upgrade e2e test asserts the transfer came first).
type leaderHistory struct {
	seq     uint64
	changes []api.LeaderChange
}

// setLeader makes to the leader, recording the change and its cause when the leader changes.
func (c *Cluster) setLeader(to, cause string) {
	if c.leader == to {
		return
	}
	h := &c.leaderHistory
	h.seq++
	h.changes = append(h.changes, api.LeaderChange{Seq: h.seq, At: c.lastAdvance, From: c.leader, To: to, Cause: cause})
	if n := len(h.changes); n > leaderHistoryLimit {
		h.changes = append([]api.LeaderChange(nil), h.changes[n-leaderHistoryLimit:]...)
	}
	c.leader = to
}

// leaderChangeList returns a copy of the recorded leader changes, oldest first.
func (c *Cluster) leaderChangeList() []api.LeaderChange {
	return append([]api.LeaderChange{}, c.leaderHistory.changes...)
}
