package tidbcluster

import (
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// FullRefreshEvery is how many refresh intervals a converged cluster's
// refreshes may read only what shows a failure (flow.ObserveFailures)
// before one reads everything again (the PD leader, PD's location labels).
const FullRefreshEvery = 40

// StatusMemory remembers, per cluster, the status the last sync left on the
// API server and when its members were last read from PD and TiDB.
//
// The first lets a sync start from the truth even when the informer cache
// has not yet delivered the operator's own last status write: the operator
// is the only writer of status, so what it last wrote is what the server
// has. Without it, a sync racing its own write would start from an older
// status (losing a failure record or a lastTransitionTime) and write it
// back. This holds while the process leads: it exits when it loses the
// lease, so a memory never outlives a term in which another instance wrote.
// The second lets resyncs of a converged cluster skip PD and TiDB, and
// its periodic refreshes read only what shows a failure.
// A StatusMemory is safe for concurrent use; a nil one remembers nothing.
type StatusMemory struct {
	clock   clock.PassiveClock
	refresh time.Duration
	// progress is how long a status that only shows progress may wait
	// before it is written (0: never); see HoldProgress.
	progress time.Duration

	mu       sync.Mutex
	clusters map[types.UID]*memo
}

type memo struct {
	// status is the status last written, as the server stores it; nil once
	// the informer cache holds it too (Recall), so that a converged
	// cluster's status is kept once, in the cache.
	status     *v1alpha1.TidbClusterStatus
	generation int64     // the spec generation the status was computed for
	observedAt time.Time // when members were last read
	fullAt     time.Time // when members were last read in full (flow.ObserveAll)
	converged  bool      // the last sync ended done and Ready, and changed nothing
	writtenAt  time.Time // when this process last wrote the status (zero: never)
	// pending is a status computed but held back (progress only, written
	// within the progress interval); the next sync starts from it.
	pending *v1alpha1.TidbClusterStatus
}

// NewStatusMemory returns a memory that lets a converged cluster reuse its
// members for refresh (0: never) and holds back a status that only shows
// progress for at most progress after the last write (0: never held).
func NewStatusMemory(clk clock.PassiveClock, refresh, progress time.Duration) *StatusMemory {
	return &StatusMemory{clock: clk, refresh: refresh, progress: progress, clusters: map[types.UID]*memo{}}
}

// Recall puts the last status written for tc (same UID) into tc.Status,
// unless tc, read from the cache, holds it already (the memory then drops
// its copy), and says how much of the members this sync reads. When the last sync
// converged (done, Ready, status unchanged) at the same generation, it
// keeps them (flow.ObserveNone) while they were read less than the refresh
// interval ago, and then reads only what shows a failure
// (flow.ObserveFailures) while the last full reading is less than
// FullRefreshEvery intervals old. Otherwise it reads everything.
func (m *StatusMemory) Recall(tc *v1alpha1.TidbCluster) flow.Observation {
	if m == nil {
		return flow.ObserveAll
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.clusters[tc.UID]
	if !ok {
		return flow.ObserveAll
	}
	switch {
	case last.status == nil:
	case equality.Semantic.DeepEqual(&tc.Status, last.status):
		last.status = nil // the cache caught up with the last write
	default:
		tc.Status = *last.status.DeepCopy()
	}
	switch {
	case m.refresh <= 0 || !last.converged || last.generation != tc.Generation:
		return flow.ObserveAll
	case m.clock.Since(last.observedAt) < m.refresh:
		return flow.ObserveNone
	case !last.fullAt.IsZero() && m.clock.Since(last.fullAt) < FullRefreshEvery*m.refresh:
		return flow.ObserveFailures
	}
	return flow.ObserveAll
}

// Delivered drops the copy of the last status written for tc once the
// informer delivers it (tc, a cached object, holds it), so that a cluster
// waiting for its next sync keeps its status once, in the cache: at 1000
// clusters converging these copies were about 10 MB. The informer's update
// handler calls it; Recall does the same at the start of a sync. The
// comparison runs outside the lock: another write in between replaces the
// copy and is kept.
func (m *StatusMemory) Delivered(tc *v1alpha1.TidbCluster) {
	if m == nil {
		return
	}
	m.mu.Lock()
	last, ok := m.clusters[tc.UID]
	var written *v1alpha1.TidbClusterStatus
	if ok {
		written = last.status
	}
	m.mu.Unlock()
	if written == nil || !equality.Semantic.DeepEqual(&tc.Status, written) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if last, ok := m.clusters[tc.UID]; ok && last.status == written {
		last.status = nil
	}
}

// Remember records status as what the server now has for tc, computed by a
// sync that started at start; observed says how much of the members that
// sync read (ObserveNone keeps the previous reading time, ObserveFailures
// the previous full reading time), converged whether it ended
// done and Ready without changing status, and wrote whether it wrote it.
// A status held back before is dropped: status supersedes it.
func (m *StatusMemory) Remember(tc *v1alpha1.TidbCluster, status *v1alpha1.TidbClusterStatus, start time.Time,
	observed flow.Observation, converged, wrote bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := &memo{generation: tc.Generation, observedAt: start, converged: converged}
	last, ok := m.clusters[tc.UID]
	switch {
	case wrote:
		next.status = asStored(status)
	case ok:
		next.status = last.status // unchanged: nil once the cache holds it
	}
	if observed == flow.ObserveAll {
		next.fullAt = start
	}
	if ok && observed == flow.ObserveNone {
		next.observedAt = last.observedAt
	}
	if ok && observed != flow.ObserveAll {
		next.fullAt = last.fullAt
	}
	if ok {
		next.writtenAt = last.writtenAt
	}
	if wrote {
		next.writtenAt = m.clock.Now()
	}
	m.clusters[tc.UID] = next
}

// asStored returns a copy of status as the API server stores it and the
// informer cache decodes it (times to the second), so that Recall can tell
// when the cache holds the last write. A status that does not encode
// (never: it was just written) is copied as it is.
func asStored(status *v1alpha1.TidbClusterStatus) *v1alpha1.TidbClusterStatus {
	b, err := json.Marshal(status)
	if err != nil {
		return status.DeepCopy()
	}
	out := &v1alpha1.TidbClusterStatus{}
	if err := json.Unmarshal(b, out); err != nil {
		return status.DeepCopy()
	}
	return out
}

// Pending returns a copy of the status held back for tc (same UID), or nil.
// A sync starts from it: it is what the last sync computed.
func (m *StatusMemory) Pending(tc *v1alpha1.TidbCluster) *v1alpha1.TidbClusterStatus {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if last, ok := m.clusters[tc.UID]; ok && last.pending != nil {
		return last.pending.DeepCopy()
	}
	return nil
}

// HoldProgress keeps status, computed by a sync that waits and differs from
// what the server has only in progress (ProgressOnly), instead of writing
// it, when this process wrote tc's status less than the progress interval
// ago. It returns how long the status may still wait (the caller's next
// sync comes no later), and false when it must be written now.
func (m *StatusMemory) HoldProgress(tc *v1alpha1.TidbCluster, status *v1alpha1.TidbClusterStatus) (time.Duration, bool) {
	if m == nil || m.progress <= 0 {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.clusters[tc.UID]
	if !ok || last.writtenAt.IsZero() {
		return 0, false
	}
	left := m.progress - m.clock.Since(last.writtenAt)
	if left <= 0 {
		return 0, false
	}
	last.pending = status.DeepCopy()
	last.converged = false
	return left, true
}

// now is the memory's clock reading (zero for a nil memory).
func (m *StatusMemory) now() time.Time {
	if m == nil {
		return time.Time{}
	}
	return m.clock.Now()
}

// Forget drops what is remembered of a cluster: it was deleted, or a status
// write failed and the server's status is unknown.
func (m *StatusMemory) Forget(uid types.UID) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clusters, uid)
}

// Len is the number of clusters remembered (for tests and metrics).
func (m *StatusMemory) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.clusters)
}
