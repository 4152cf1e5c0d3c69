package api

import "time"

// DMClusterSummary is one element of `GET /sim/v1/dmclusters`.
type DMClusterSummary struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Leader    string `json:"leader,omitempty"`
	Masters   int    `json:"masters"`
	Workers   int    `json:"workers"`
}

// DMClusterState is `GET /sim/v1/dmclusters/{namespace}/{name}`: the simulated dm-master of one
// DMCluster. Seq numbers LeaderChanges, Evictions and Deletes together, so a test can order events of
// different lists.
type DMClusterState struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Leader is the dm-master leader; empty while there is none (fewer than a quorum of members alive).
	Leader  string     `json:"leader,omitempty"`
	Masters []DMMaster `json:"masters"`
	Workers []DMWorker `json:"workers"`
	// LeaderChanges are the changes of the leader, oldest first, with causes LeaderCauseTransfer (an
	// eviction through `PUT /apis/v1alpha1/leader/1`), LeaderCauseElection, LeaderCauseQuorumLost and
	// LeaderCauseMemberRemoved.
	LeaderChanges []LeaderChange `json:"leaderChanges"`
	// Evictions are the `PUT /apis/v1alpha1/leader/1` requests, oldest first.
	Evictions []DMEviction `json:"evictions"`
	// Deletes are the `DELETE /apis/v1alpha1/members/{master|worker}/{name}` requests, oldest first.
	Deletes []DMDelete `json:"deletes"`
	Faults  []Fault    `json:"faults"`
	// TLSOnly: the DMCluster's dm-master server Secret `<dc>-dm-master-cluster-secret` exists, so
	// dm-master refuses plain HTTP and advertises https URLs.
	TLSOnly bool `json:"tlsOnly"`
	// TLSRequests and PlainRequests count the dm-master API requests served over TLS and plain HTTP,
	// PlainRefused the plain ones a TLS-only dm-master refused.
	TLSRequests   uint64 `json:"tlsRequests"`
	PlainRequests uint64 `json:"plainRequests"`
	PlainRefused  uint64 `json:"plainRefused"`
}

// DMMaster is a dm-master member: a Running dm-master pod that joined and was not deleted since.
type DMMaster struct {
	Name     string `json:"name"`
	MemberID uint64 `json:"memberID"`
	// Alive is what dm-master reports: the pod runs and is not marked unhealthy.
	Alive           bool `json:"alive"`
	ForcedUnhealthy bool `json:"forcedUnhealthy"`
	Leader          bool `json:"leader"`
	// Evicted is set after `PUT leader/1` on the member's pod until its process restarts: it does not
	// campaign for leadership meanwhile.
	Evicted bool `json:"evicted"`
	// PodUID is the UID of the pod that joined as this member.
	PodUID string `json:"podUID"`
	// StartedAt is when the simulator saw the member's current process (pod UID and restart count)
	// start; nil while it does not run.
	StartedAt *time.Time `json:"startedAt,omitempty"`
}

// DMWorker is a dm-worker registered with dm-master. Stage is "free" while its pod runs and
// "offline" once it does not, until `DELETE members/worker/{name}` removes it.
type DMWorker struct {
	Name  string `json:"name"`
	Addr  string `json:"addr"`
	Stage string `json:"stage"`
}

// DMEviction is one `PUT /apis/v1alpha1/leader/1` request to pod Pod: whether Pod was the leader, who
// leads afterwards and dm-master's answer.
type DMEviction struct {
	Seq       uint64    `json:"seq"`
	At        time.Time `json:"at"`
	Pod       string    `json:"pod"`
	WasLeader bool      `json:"wasLeader"`
	NewLeader string    `json:"newLeader"`
	Accepted  bool      `json:"accepted"`
	Msg       string    `json:"msg,omitempty"`
}

// DMDelete is one `DELETE /apis/v1alpha1/members/{Kind}/{Name}` request and dm-master's answer.
type DMDelete struct {
	Seq      uint64    `json:"seq"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Name     string    `json:"name"`
	Accepted bool      `json:"accepted"`
	Msg      string    `json:"msg,omitempty"`
}
