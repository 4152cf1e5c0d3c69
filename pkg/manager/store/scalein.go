package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Event reasons of a store's scale-in.
const (
	// ReasonStoreDeleted (Normal): the operator deleted a store from PD; PD moves its data away.
	ReasonStoreDeleted = "StoreDeleted"
	// ReasonStoreTombstone (Normal): PD reports the store Tombstone; its pod is removed.
	ReasonStoreTombstone = "StoreTombstone"
)

// PreScaleIn takes the pod's store out of the cluster: it checks that PD
// would keep enough stores (minStores), asks PD to delete the store, and
// releases the pod only when the store is Tombstone. A pod whose store
// never registered (or already is Tombstone) is released at once, unless it
// is Ready (its store may not show yet).
func (l *Lifecycle) PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	pod := names.Pod(tc.Name, l.kind.Component, ordinal)
	if !l.kind.Status(tc).Synced {
		return flow.Requeue("PD must answer before store of %s is removed", pod)
	}
	store, ok := l.Of(tc, pod)
	if !ok {
		// A Tombstone of the same pod name may be an earlier member of the
		// ordinal; only without a live store does it release the pod.
		if l.tombstoned(tc, pod) {
			l.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonStoreTombstone,
				"%s store of %s is Tombstone; removing the pod (its PVCs are kept)", l.kind.Label, pod)
			return nil
		}
		return l.scaleInWithoutStore(tc, pod)
	}
	id, err := strconv.ParseUint(store.ID, 10, 64)
	if err != nil {
		return fmt.Errorf("store ID %q of %s: %w", store.ID, pod, err)
	}
	switch store.State {
	case pdapi.StoreStateNameOffline:
		return flow.Requeue("store %s of %s is Offline; waiting for PD to report it Tombstone", store.ID, pod)
	case pdapi.StoreStateNameTombstone:
		l.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonStoreTombstone,
			"%s store %s of %s is Tombstone; removing the pod (its PVCs are kept)", l.kind.Label, store.ID, pod)
		return nil
	}
	if err := l.checkStoresLeft(ctx, tc, store, "FailedScaleIn"); err != nil {
		return err
	}
	if err := l.Client(tc).DeleteStore(ctx, id); err != nil {
		return fmt.Errorf("delete store %d of %s: %w", id, pod, err)
	}
	l.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonStoreDeleted,
		"deleted %s store %s of %s from PD; the pod goes once PD reports the store Tombstone", l.kind.Label, store.ID, pod)
	// PD reports the store Offline from now on; say so in memory too, so
	// that the next store removed in this sync (scaleInParallelism) counts
	// the Up stores that really remain.
	store.State = pdapi.StoreStateNameOffline
	l.kind.Status(tc).Stores[store.ID] = store
	flow.Forget(ctx, storesKey(tc))
	return flow.Requeue("deleting store %s of %s; waiting for PD to report it Tombstone", store.ID, pod)
}

// neverJoinedAfter is how long a pod that is not Ready, in a bootstrapped
// cluster, may have no store in PD before its removal goes on without one:
// five of the TiDB Operator's 30 s resync periods (spec §7.3, "pod never
// joined"). A younger pod may be registering its store right now.
const neverJoinedAfter = 5 * 30 * time.Second

// scaleInWithoutStore decides for a pod PD reports no store of: a pod that
// never became Ready (Pending, crashing) may go, so a scale-in is not held
// by it, once it is older than neverJoinedAfter (at once while TiKV is not
// bootstrapped); a Ready pod, or a younger one, has most likely registered
// a store PD has not shown yet (the pod was just added, by hand or by a
// scale-out), so removing it waits for the store to show and leave through
// Tombstone. The fault suite's edit/tikv-sts-replicas-up found the young
// pod removed while its store had just come Up.
func (l *Lifecycle) scaleInWithoutStore(tc *v1alpha1.TidbCluster, pod string) error {
	if l.pods == nil {
		return nil
	}
	p, err := l.pods.Pods(tc.Namespace).Get(pod)
	if err != nil {
		return nil
	}
	if component.PodReady(p) {
		return flow.Requeue("pod %s is Ready but PD reports no store of it yet; waiting for the store before removing the pod", pod)
	}
	if age := l.clock.Since(p.CreationTimestamp.Time); tc.Status.TiKV.BootStrapped && age < neverJoinedAfter {
		return flow.RequeueAfter(neverJoinedAfter-age, "pod %s is not Ready and PD reports no store of it; it may be registering one: "+
			"waiting until it is %s old before removing it without a store", pod, neverJoinedAfter)
	}
	return nil
}

// checkStoresLeft refuses to take a store out when PD could not keep its
// copies on the Up stores that would remain: TiKV needs PD's max-replicas
// TiKV stores; TiFlash needs as many TiFlash stores as the largest TiFlash
// replica count of any table, and — PD's own rule, counting every Up store
// of either engine — max-replicas stores in all. A refusal is a Warning
// event of reason (FailedScaleIn, ReplaceVolumeRefused) and a wait of 30s.
func (l *Lifecycle) checkStoresLeft(ctx context.Context, tc *v1alpha1.TidbCluster, store v1alpha1.TiKVStore, reason string) error {
	left := func(up int) int {
		if store.State == pdapi.StoreStateNameUp {
			up--
		}
		return max(up, 0)
	}
	client := l.Client(tc)
	cfg, err := client.GetConfig(ctx)
	if err != nil {
		return fmt.Errorf("read PD replication config: %w", err)
	}
	maxReplicas := int(min(cfg.Replication.MaxReplicas, 1<<20)) //nolint:gosec // clamped
	if !l.kind.TiFlash {
		if up := left(l.UpStores(tc)); up < maxReplicas {
			return l.refuse(tc, store, reason, fmt.Sprintf("%d Up TiKV stores would remain, PD keeps %d replicas", up, maxReplicas))
		}
		return nil
	}
	if up := left(UpStores(&tc.Status.TiKV) + UpStores(&tc.Status.TiFlash)); up < maxReplicas {
		return l.refuse(tc, store, reason, fmt.Sprintf("%d Up stores would remain in all, PD keeps %d replicas", up, maxReplicas))
	}
	need, err := client.MaxTiFlashReplicas(ctx)
	if err != nil {
		return fmt.Errorf("read TiFlash placement rules: %w", err)
	}
	if up := left(l.UpStores(tc)); up < need {
		return l.refuse(tc, store, reason, fmt.Sprintf("%d Up TiFlash stores would remain, a table has %d TiFlash replicas", up, need))
	}
	return nil
}

func (l *Lifecycle) refuse(tc *v1alpha1.TidbCluster, store v1alpha1.TiKVStore, reason, why string) error {
	msg := fmt.Sprintf("cannot remove %s store %s of %s: %s", l.kind.Label, store.ID, store.PodName, why)
	l.recorder.Event(tc, corev1.EventTypeWarning, reason, msg)
	return flow.RequeueAfter(30*time.Second, "%s", msg)
}
