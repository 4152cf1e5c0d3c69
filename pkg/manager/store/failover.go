package store

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// FailoverReplicas is one extra store per recorded failure.
func (l *Lifecycle) FailoverReplicas(tc *v1alpha1.TidbCluster) int32 {
	return int32(len(l.kind.Status(tc).FailureStores)) //nolint:gosec // bounded by maxFailoverCount
}

// Failover adds a replacement store for each store of a desired ordinal
// that PD reports Down for longer than the grace period (at most
// maxFailoverCount). The Down store itself is never deleted: its data may
// come back. Failures are recovered — the extra stores then leave through
// the normal scale-in, Tombstone first — only when the user asks
// (recoverFailover, or failover.recoverByUID equal to the status's
// failoverUID) and every desired store is Up again. With
// --detect-node-failure a failed store's record is marked host-down, and
// the cluster's auto-failure-recovery annotation then replaces the store
// (failover_hostdown.go).
func (l *Lifecycle) Failover(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	s, spec := l.kind.Status(tc), l.kind.Spec(tc)
	for id, f := range s.FailureStores {
		if o, err := names.Ordinal(f.PodName); err == nil && o >= spec.Replicas {
			delete(s.FailureStores, id) // its ordinal was scaled away
		}
	}
	recover := spec.RecoverFailover || (spec.RecoverByUID != "" && spec.RecoverByUID == string(s.FailoverUID))
	if len(s.FailureStores) > 0 && recover && l.allStoresUp(tc, spec.Replicas) {
		l.recorder.Eventf(tc, corev1.EventTypeNormal, "Recovery", "every %s store is Up again; removing %d failover store(s)",
			l.kind.Label, len(s.FailureStores))
		s.FailureStores, s.FailoverUID = nil, ""
		return nil
	}
	if !l.failover.Enabled || !s.Synced {
		return nil
	}
	if err := l.nodeFailure(ctx, tc); err != nil {
		return err
	}
	if int32(len(s.FailureStores)) >= component.MaxFailover(spec.MaxFailoverCount) { //nolint:gosec // small
		return nil
	}
	now := l.clock.Now()
	for id, st := range s.Stores {
		o, err := names.Ordinal(st.PodName)
		if err != nil || o >= spec.Replicas || st.State != pdapi.StoreStateNameDown {
			continue
		}
		if _, recorded := s.FailureStores[id]; recorded || !component.Expired(st.LastTransitionTime.Time, l.failover.Period, now) {
			continue
		}
		if s.FailureStores == nil {
			s.FailureStores = map[string]v1alpha1.TiKVFailureStore{}
		}
		if s.FailoverUID == "" {
			s.FailoverUID = uuid.NewUUID()
		}
		s.FailureStores[id] = v1alpha1.TiKVFailureStore{PodName: st.PodName, StoreID: id, CreatedAt: metav1.NewTime(now),
			PVCUIDSet: l.hosts.PVCUIDs(tc, st.PodName)}
		l.recorder.Event(tc, corev1.EventTypeWarning, "Unhealthy",
			fmt.Sprintf("%s store %s (pod %s) is Down; adding a failover store", l.kind.Component, id, st.PodName))
		return nil
	}
	return nil
}

// allStoresUp reports whether the stores of every desired ordinal are Up.
func (l *Lifecycle) allStoresUp(tc *v1alpha1.TidbCluster, replicas int32) bool {
	for o := int32(0); o < replicas; o++ {
		st, ok := l.Of(tc, names.Pod(tc.Name, l.kind.Component, o))
		if !ok || st.State != pdapi.StoreStateNameUp {
			return false
		}
	}
	return true
}

// StoreIDs are the IDs of every store the status knows for this cluster
// (live, tombstoned or failed).
func (l *Lifecycle) StoreIDs(tc *v1alpha1.TidbCluster) map[uint64]bool {
	s := l.kind.Status(tc)
	out := map[uint64]bool{}
	for _, m := range []map[string]v1alpha1.TiKVStore{s.Stores, s.TombstoneStores} {
		for id := range m {
			if n, err := strconv.ParseUint(id, 10, 64); err == nil {
				out[n] = true
			}
		}
	}
	for id := range s.FailureStores {
		if n, err := strconv.ParseUint(id, 10, 64); err == nil {
			out[n] = true
		}
	}
	return out
}
