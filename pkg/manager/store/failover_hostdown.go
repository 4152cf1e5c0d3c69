package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// ReasonRecovery (Normal) is recorded when a host-down store is deleted
// from PD by auto-failure-recovery.
const ReasonRecovery = "Recovery"

// nodeFailure runs spec §8.4 on the failure records, in store ID order: a
// record of a store still failing, with its PVCs known, is marked
// host-down when its node is; with the cluster's auto-failure-recovery
// annotation a host-down store's pod is restarted on another node, and if
// the store still fails once the new pod ran for the restart gap, the store
// is deleted in PD; once PD reports it Tombstone (or no longer knows it),
// the pod and the recorded PVCs are deleted so that the ordinal comes back
// with an empty store. A converged record (store deleted, or store Up
// again) costs no read and no write.
func (l *Lifecycle) nodeFailure(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	s := l.kind.Status(tc)
	ids := make([]string, 0, len(s.FailureStores))
	for id := range s.FailureStores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		f := s.FailureStores[id]
		if f.StoreDeleted || !l.stillFailing(tc, id) {
			continue
		}
		if !f.HostDown && len(f.PVCUIDSet) > 0 {
			what := fmt.Sprintf("%s store %s (pod %s)", l.kind.Label, id, f.PodName)
			down, err := l.hosts.MarkHostDown(ctx, tc, what, f.PodName, f.CreatedAt.Time)
			if err != nil {
				return err
			}
			f.HostDown = down
			s.FailureStores[id] = f
		}
		if f.HostDown && component.AutoRecovery(tc) {
			if err := l.recoverHostDown(ctx, tc, id, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// stillFailing reports whether the failed store id is not Up: Down,
// Disconnected, Offline, Tombstone, or gone from PD.
func (l *Lifecycle) stillFailing(tc *v1alpha1.TidbCluster, id string) bool {
	st, ok := l.kind.Status(tc).Stores[id]
	return !ok || st.State != pdapi.StoreStateNameUp
}

// recoverHostDown takes one step of a host-down store's recovery.
func (l *Lifecycle) recoverHostDown(ctx context.Context, tc *v1alpha1.TidbCluster, id string, f v1alpha1.TiKVFailureStore) error {
	s := l.kind.Status(tc)
	if !s.Synced {
		return nil
	}
	st, live := s.Stores[id]
	if !live || st.State == pdapi.StoreStateNameTombstone {
		why := fmt.Sprintf("%s store %s is Tombstone after its host went down", l.kind.Label, id)
		kept, err := l.hosts.DeletePodAndPVCs(ctx, tc, f.PodName, f.PVCUIDSet, why)
		if err != nil {
			return err
		}
		f.StoreDeleted = true
		s.FailureStores[id] = f
		done := "pod " + f.PodName + " and its PVCs deleted, it comes back with an empty store"
		if kept {
			done = "pod " + f.PodName + " kept: it already runs a new store on new PVCs"
		}
		l.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonStoreTombstone, "%s; %s", why, done)
		return nil
	}
	if st.State == pdapi.StoreStateNameOffline {
		return flow.Requeue("host-down %s store %s is Offline; waiting for PD to report it Tombstone", l.kind.Label, id)
	}
	restarted, err := l.hosts.Restarted(ctx, tc, f.PodName, f.CreatedAt.Time)
	if err != nil || !restarted {
		return err
	}
	if err := l.checkStoresLeft(ctx, tc, st, "FailedRecovery"); err != nil {
		return err
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return fmt.Errorf("store ID %q of %s: %w", id, f.PodName, err)
	}
	if err := l.Client(tc).DeleteStore(ctx, n); err != nil {
		return fmt.Errorf("delete host-down store %s of %s: %w", id, f.PodName, err)
	}
	l.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonRecovery,
		"%s store %s of %s is still %s after its host went down and the pod restarted; deleted it from PD, its pod and PVCs go once it is Tombstone",
		l.kind.Label, id, f.PodName, st.State)
	st.State = pdapi.StoreStateNameOffline
	s.Stores[id] = st
	flow.Forget(ctx, storesKey(tc))
	return flow.Requeue("deleting host-down store %s of %s; waiting for PD to report it Tombstone", id, f.PodName)
}
