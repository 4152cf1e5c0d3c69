package tikv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// FailoverReplicas is one extra store per recorded failure.
func (h *Hooks) FailoverReplicas(tc *v1alpha1.TidbCluster) int32 {
	return int32(len(tc.Status.TiKV.FailureStores)) //nolint:gosec // bounded by maxFailoverCount
}

// Failover adds a replacement store for each store of a desired ordinal
// that PD reports Down for longer than the grace period (at most
// maxFailoverCount). The Down store itself is never deleted: its data may
// come back. Failures are recovered — the extra stores then leave through
// the normal scale-in, Tombstone first — only when the user asks
// (spec.tikv.recoverFailover, or failover.recoverByUID equal to
// status.tikv.failoverUID) and every desired store is Up again.
func (h *Hooks) Failover(_ context.Context, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.TiKV
	replicas := tc.Spec.TiKV.Replicas
	for id, f := range s.FailureStores {
		if o, err := names.Ordinal(f.PodName); err == nil && o >= replicas {
			delete(s.FailureStores, id) // its ordinal was scaled away
		}
	}
	if len(s.FailureStores) > 0 && recoveryRequested(tc) && allStoresUp(tc, replicas) {
		h.recorder.Eventf(tc, corev1.EventTypeNormal, "Recovery", "every TiKV store is Up again; removing %d failover store(s)", len(s.FailureStores))
		s.FailureStores, s.FailoverUID = nil, ""
		return nil
	}
	if !h.failover.Enabled || !s.Synced || int32(len(s.FailureStores)) >= component.MaxFailover(tc.Spec.TiKV.MaxFailoverCount) { //nolint:gosec // small
		return nil
	}
	now := h.clock.Now()
	for id, st := range s.Stores {
		o, err := names.Ordinal(st.PodName)
		if err != nil || o >= replicas || st.State != pdapi.StoreStateNameDown {
			continue
		}
		if _, recorded := s.FailureStores[id]; recorded || !component.Expired(st.LastTransitionTime.Time, h.failover.Period, now) {
			continue
		}
		if s.FailureStores == nil {
			s.FailureStores = map[string]v1alpha1.TiKVFailureStore{}
		}
		if s.FailoverUID == "" {
			s.FailoverUID = uuid.NewUUID()
		}
		s.FailureStores[id] = v1alpha1.TiKVFailureStore{PodName: st.PodName, StoreID: id, CreatedAt: metav1.NewTime(now)}
		h.recorder.Event(tc, corev1.EventTypeWarning, "Unhealthy",
			fmt.Sprintf("tikv store %s (pod %s) is Down; adding a failover store", id, st.PodName))
		return nil
	}
	return nil
}

func recoveryRequested(tc *v1alpha1.TidbCluster) bool {
	kv := tc.Spec.TiKV
	return kv.RecoverFailover || (kv.Failover != nil && kv.Failover.RecoverByUID != "" && kv.Failover.RecoverByUID == tc.Status.TiKV.FailoverUID)
}

// allStoresUp reports whether the stores of every desired ordinal are Up.
func allStoresUp(tc *v1alpha1.TidbCluster, replicas int32) bool {
	for o := int32(0); o < replicas; o++ {
		st, ok := storeOf(tc, names.Pod(tc.Name, names.TiKV, o))
		if !ok || st.State != pdapi.StoreStateNameUp {
			return false
		}
	}
	return true
}
