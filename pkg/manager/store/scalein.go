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
		return nil
	}
	if err := l.checkStoresLeft(ctx, tc, store); err != nil {
		return err
	}
	if err := l.Client(tc).DeleteStore(ctx, id); err != nil {
		return fmt.Errorf("delete store %d of %s: %w", id, pod, err)
	}
	flow.Forget(ctx, storesKey(tc))
	return flow.Requeue("deleting store %s of %s; waiting for PD to report it Tombstone", store.ID, pod)
}

// scaleInWithoutStore decides for a pod PD reports no store of: a pod that
// never became Ready (Pending, crashing) may go, so a scale-in is not held
// by it; a Ready pod has most likely registered a store PD has not shown
// yet (the pod was just added, by hand or by a scale-out), so removing it
// waits for the store to show and leave through Tombstone.
func (l *Lifecycle) scaleInWithoutStore(tc *v1alpha1.TidbCluster, pod string) error {
	if l.pods == nil {
		return nil
	}
	p, err := l.pods.Pods(tc.Namespace).Get(pod)
	if err != nil || !component.PodReady(p) {
		return nil
	}
	return flow.Requeue("pod %s is Ready but PD reports no store of it yet; waiting for the store before removing the pod", pod)
}

// checkStoresLeft refuses to take a store out when PD could not keep its
// copies on the Up stores that would remain: TiKV needs PD's max-replicas
// stores; TiFlash needs as many TiFlash stores as the largest TiFlash
// replica count of any table. A refusal is a Warning FailedScaleIn and a
// wait of 30s.
func (l *Lifecycle) checkStoresLeft(ctx context.Context, tc *v1alpha1.TidbCluster, store v1alpha1.TiKVStore) error {
	need, what, err := l.minStores(ctx, tc)
	if err != nil {
		return err
	}
	up := l.UpStores(tc)
	if store.State == pdapi.StoreStateNameUp {
		up--
	}
	if up >= need {
		return nil
	}
	msg := fmt.Sprintf("cannot remove %s store %s of %s: %d Up stores would remain, %s %d",
		l.kind.Label, store.ID, store.PodName, max(up, 0), what, need)
	l.recorder.Event(tc, corev1.EventTypeWarning, "FailedScaleIn", msg)
	return flow.RequeueAfter(30*time.Second, "%s", msg)
}

// minStores is how many Up stores of the kind must remain, and what needs them.
func (l *Lifecycle) minStores(ctx context.Context, tc *v1alpha1.TidbCluster) (int, string, error) {
	if l.kind.TiFlash {
		n, err := l.Client(tc).MaxTiFlashReplicas(ctx)
		if err != nil {
			return 0, "", fmt.Errorf("read TiFlash placement rules: %w", err)
		}
		return n, "a table has TiFlash replicas", nil
	}
	cfg, err := l.Client(tc).GetConfig(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("read PD replication config: %w", err)
	}
	return int(min(cfg.Replication.MaxReplicas, 1<<20)), "PD keeps replicas", nil //nolint:gosec // clamped
}
