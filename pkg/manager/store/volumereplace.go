package store

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var _ component.VolumeReplacer[*v1alpha1.TidbCluster] = (*Lifecycle)(nil)

// SpareVolumeReplicas is spec.tikv.spareVolReplaceReplicas for TiKV (1
// when unset), so PD keeps as many Up stores while one is replaced; TiFlash
// has no such field and adds none.
func (l *Lifecycle) SpareVolumeReplicas(tc *v1alpha1.TidbCluster) int32 {
	if l.kind.TiFlash || tc.Spec.TiKV == nil {
		return 0
	}
	if p := tc.Spec.TiKV.SpareVolReplaceReplicas; p != nil {
		return *p
	}
	return 1
}

// PrepareVolumeReplace takes the store of pod out of the cluster before
// its volumes are replaced, and returns nil only once PD reports the
// store Tombstone: an Up (or Down) store is deleted from PD (event
// StoreDeleted) once the stores left can keep PD's replicas (else a
// Warning ReplaceVolumeRefused), an Offline one is waited for. A pod whose
// store never registered may go unless it is Ready (its store may not show
// yet). A store PD lists under the pod's name with another ID than the
// pod's store-id label belongs to a pod created again already: the request
// waits for the pod cache rather than delete the new store.
func (l *Lifecycle) PrepareVolumeReplace(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod) error {
	if !l.kind.Status(tc).Synced {
		return flow.Requeue("PD must answer before the store of %s leaves", pod.Name)
	}
	store, ok := l.Of(tc, pod.Name)
	if !ok {
		if l.tombstoned(tc, pod.Name) || !component.PodReady(pod) {
			return nil
		}
		return flow.Requeue("pod %s is Ready but PD reports no store of it yet", pod.Name)
	}
	if id := pod.Labels[label.StoreIDLabelKey]; id != "" && id != store.ID {
		return flow.Requeue("store %s of %s is not the pod's store %s: waiting for the pod cache", store.ID, pod.Name, id)
	}
	id, err := strconv.ParseUint(store.ID, 10, 64)
	if err != nil {
		return fmt.Errorf("store ID %q of %s: %w", store.ID, pod.Name, err)
	}
	switch store.State {
	case pdapi.StoreStateNameOffline:
		return flow.Requeue("store %s of %s is Offline; waiting for PD to report it Tombstone", store.ID, pod.Name)
	case pdapi.StoreStateNameTombstone:
		return nil
	}
	if err := l.checkStoresLeft(ctx, tc, store, component.ReasonReplaceVolumeRefused); err != nil {
		return err
	}
	if err := l.Client(tc).DeleteStore(ctx, id); err != nil {
		return fmt.Errorf("delete store %d of %s: %w", id, pod.Name, err)
	}
	l.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonStoreDeleted,
		"deleted %s store %s of %s from PD before its volumes are replaced; its PVCs go once PD reports it Tombstone", l.kind.Label, store.ID, pod.Name)
	store.State = pdapi.StoreStateNameOffline
	l.kind.Status(tc).Stores[store.ID] = store
	flow.Forget(ctx, storesKey(tc))
	return flow.Requeue("deleting store %s of %s; waiting for PD to report it Tombstone", store.ID, pod.Name)
}
