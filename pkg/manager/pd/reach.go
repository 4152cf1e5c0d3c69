package pd

import (
	"context"
	"errors"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Event reasons of a PD the operator could not read.
const (
	// ReasonPDUnreachable (Warning): PD could not be asked (DNS, connection, TLS, timeout).
	ReasonPDUnreachable = "PDUnreachable"
	// ReasonPDNoLeader (Warning): PD answers that it has no leader; the message says
	// what the retained PVCs tell about it.
	ReasonPDNoLeader = "PDNoLeader"
)

// reachMemory remembers, per cluster, why PD could not be read the last
// time it was asked, until it answers: a sync that does not ask PD (no PD
// pod Ready) still names the cause, and each distinct cause is recorded as
// an event once while PD does not answer, not once per sync (nor again
// when two causes alternate). The zero value is ready; it is safe for
// concurrent use.
type reachMemory struct {
	mu       sync.Mutex
	clusters map[types.UID]*reachState
}

type reachState struct {
	cause    string          // the last cause named
	recorded map[string]bool // the causes recorded as events
}

// remember records why for uid and reports whether it is a cause not
// recorded before since PD last answered.
func (r *reachMemory) remember(uid types.UID, why string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clusters == nil {
		r.clusters = map[types.UID]*reachState{}
	}
	st, ok := r.clusters[uid]
	if !ok {
		st = &reachState{recorded: map[string]bool{}}
		r.clusters[uid] = st
	}
	st.cause = why
	if st.recorded[why] {
		return false
	}
	st.recorded[why] = true
	return true
}

// recall returns what was remembered for uid ("" when PD answered last).
func (r *reachMemory) recall(uid types.UID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.clusters[uid]; ok {
		return st.cause
	}
	return ""
}

// forget drops what was remembered for uid: PD answered.
func (r *reachMemory) forget(uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.clusters, uid)
}

// unreachable names why PD could not be read (err, from observeMembers) in
// the cluster's conditions (flow.AddBlocker), remembers it and records a
// Warning event when the cause is new. A PD without a leader is explained
// from the cluster's PD PVCs when they point at retained data
// (noLeaderCause). A client certificate that cannot be loaded is left to
// the skeleton, which names it for every component.
func (c *Component) unreachable(ctx context.Context, tc *v1alpha1.TidbCluster, err error) {
	var config *pdapi.TLSConfigError
	if errors.As(err, &config) {
		return
	}
	why := unreachableMessage(tc, err)
	reason := ReasonPDUnreachable
	if pdapi.IsLeaderNil(err) {
		reason = ReasonPDNoLeader
		if stale := retainedData(tc, c.FailoverReplicas(tc), c.pdClaims(tc)); stale != "" {
			why += ": " + stale
		}
	}
	flow.AddBlocker(ctx, why)
	if c.reach.remember(tc.UID, why) && c.recorder != nil {
		c.recorder.Event(tc, corev1.EventTypeWarning, reason, why)
	}
}

// recallUnreachable names the cause remembered from the last time PD was
// asked, for a sync that does not ask it.
func (c *Component) recallUnreachable(ctx context.Context, tc *v1alpha1.TidbCluster) {
	flow.AddBlocker(ctx, c.reach.recall(tc.UID))
}

// unreachableMessage is "PD at <url> <what happened>" (pdapi.Unreachable).
func unreachableMessage(tc *v1alpha1.TidbCluster, err error) string {
	return "PD at " + pdapi.ClientURL(tc.Namespace, tc.Name, ClientOptions(tc)) + " " + pdapi.Unreachable(err)
}
