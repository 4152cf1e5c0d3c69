package reclaim

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// PolicyManager is the first step of a cluster sync: it gives the PV of
// every bound cluster PVC spec.pvReclaimPolicy (PVCs marked defer-deleting
// are the cleaner's). A converged cluster costs no API request: the PVs
// are read from the cache.
type PolicyManager struct {
	pvcs  corelisters.PersistentVolumeClaimLister
	pvs   *volumes
	clock clock.PassiveClock
	left  leftOnce
}

// NewPolicy returns the reclaim-policy step of a cluster sync (run first)
// over env's caches and write layer.
func NewPolicy(env *component.Env) *PolicyManager {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &PolicyManager{pvcs: env.PVCs, pvs: newVolumes(env), clock: clk}
}

// NewCleaner returns the PVC cleaner of a cluster sync (run last).
func NewCleaner(env *component.Env) *Cleaner {
	return &Cleaner{pvcs: env.PVCs, pods: env.Pods, sts: env.StatefulSets, pvs: newVolumes(env)}
}

func newVolumes(env *component.Env) *volumes {
	return &volumes{kube: env.Kube, writer: env.Writer, lister: env.PVs}
}

// Name labels metrics and logs.
func (m *PolicyManager) Name() string { return "pv_reclaim_policy" }

// Sync patches the PVs whose policy or labels differ, except those of new
// PD, TiKV and TiFlash PVCs the meta labeller will patch once with their
// member's IDs (component.AwaitsMetaLabels), and, once, those of older ones
// still without the IDs (leftOnce). It does nothing for a
// paused cluster or without a PV cache, and returns an error (the sync is
// retried) when a patch fails.
func (m *PolicyManager) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if tc.Spec.Paused || m.pvs.lister == nil {
		return nil
	}
	pvcs, err := claims(m.pvcs, tc)
	if err != nil {
		return err
	}
	now := m.clock.Now()
	for _, pvc := range pvcs {
		if deferred(pvc) || component.AwaitsMetaLabels(pvc, now) {
			continue
		}
		want := component.DesiredPV(tc, pvc, nil, "")
		if m.pvs.holds(pvc, want) || m.left.leaveOnce(pvc, now) {
			continue
		}
		if err := m.pvs.write(ctx, tc, pvc, want); err != nil {
			return err
		}
	}
	return nil
}

// leftOnce remembers the PVCs whose PV the policy step left once to the
// meta labeller after component.MetaLabelWait. A PD, TiKV or TiFlash PVC
// still without its member's IDs then is most often one whose cluster is
// synced for the first time since its pod ran (a long queue, a slow image
// pull): the labeller writes the PV, policy and IDs in one patch, later in
// the same sync. Writing the policy first made two patches a second apart
// for nearly every PV at 1000 clusters. If the labeller does not write it
// (PD cannot name the member yet), the next sync does.
type leftOnce struct {
	mu   sync.Mutex
	uids map[types.UID]time.Time
}

// leaveOnce reports whether the step should leave pvc's PV to the labeller
// this time: a member's PVC without the cluster-id label, not left before.
// Entries older than MetaLabelWait are forgotten, so the map holds only the
// PVCs of recent syncs.
func (l *leftOnce) leaveOnce(pvc *corev1.PersistentVolumeClaim, now time.Time) bool {
	if !component.HasPDIdentity(pvc.Labels[label.ComponentLabelKey]) {
		return false
	}
	if pvc.Labels[label.ClusterIDLabelKey] != "" {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for uid, at := range l.uids {
		if now.Sub(at) >= component.MetaLabelWait {
			delete(l.uids, uid)
		}
	}
	if _, left := l.uids[pvc.UID]; left {
		return false
	}
	if l.uids == nil {
		l.uids = map[types.UID]time.Time{}
	}
	l.uids[pvc.UID] = now
	return true
}
