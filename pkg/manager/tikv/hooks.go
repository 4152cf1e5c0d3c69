package tikv

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Hooks are TiKV's lifecycle hooks. A store's data is never abandoned: a
// pod is removed only once PD reports its store Tombstone, and a pod is
// restarted only after its region leaders moved away (or the eviction
// timed out); the evict-leader scheduler is removed once the pod is back.
type Hooks struct {
	failover component.FailoverConfig
	pd       pdapi.Control
	kube     kubernetes.Interface
	pods     corelisters.PodLister
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// NewHooks returns TiKV's hooks.
func NewHooks(cfg component.FailoverConfig, ctl pdapi.Control, kube kubernetes.Interface, pods corelisters.PodLister,
	recorder record.EventRecorder, clk clock.PassiveClock) *Hooks {
	return &Hooks{failover: cfg, pd: ctl, kube: kube, pods: pods, recorder: recorder, clock: clk}
}

var _ component.Hooks = (*Hooks)(nil)

// storeOf returns this cluster's live store of a pod.
func storeOf(tc *v1alpha1.TidbCluster, pod string) (v1alpha1.TiKVStore, bool) {
	for _, s := range tc.Status.TiKV.Stores {
		if s.PodName == pod {
			return s, true
		}
	}
	return v1alpha1.TiKVStore{}, false
}

func tombstoned(tc *v1alpha1.TidbCluster, pod string) bool {
	for _, s := range tc.Status.TiKV.TombstoneStores {
		if s.PodName == pod {
			return true
		}
	}
	return false
}

// PreScaleIn takes the pod's store out of the cluster: it checks that enough
// stores stay Up for PD's max-replicas, asks PD to delete the store, and
// releases the pod only when the store is Tombstone. A pod whose store
// never registered (or already is Tombstone) is released at once.
func (h *Hooks) PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	pod := names.Pod(tc.Name, names.TiKV, ordinal)
	if !tc.Status.TiKV.Synced {
		return flow.Requeue("PD must answer before store of %s is removed", pod)
	}
	store, ok := storeOf(tc, pod)
	if tombstoned(tc, pod) {
		return nil
	}
	if !ok {
		return h.scaleInWithoutStore(tc, pod)
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
	if err := h.checkReplicas(ctx, tc, store); err != nil {
		return err
	}
	if err := h.client(tc).DeleteStore(ctx, id); err != nil {
		return fmt.Errorf("delete store %d of %s: %w", id, pod, err)
	}
	return flow.Requeue("deleting store %s of %s; waiting for PD to report it Tombstone", store.ID, pod)
}

// scaleInWithoutStore decides for a pod PD reports no store of: a pod that
// never became Ready (Pending, crashing) may go, so a scale-in is not held
// by it; a Ready pod has most likely registered a store PD has not shown
// yet (the pod was just added, by hand or by a scale-out), so removing it
// waits for the store to show and leave through Tombstone.
func (h *Hooks) scaleInWithoutStore(tc *v1alpha1.TidbCluster, pod string) error {
	if h.pods == nil {
		return nil
	}
	p, err := h.pods.Pods(tc.Namespace).Get(pod)
	if err != nil || !component.PodReady(p) {
		return nil
	}
	return flow.Requeue("pod %s is Ready but PD reports no store of it yet; waiting for the store before removing the pod", pod)
}

// checkReplicas refuses to take a store out when the remaining Up stores
// could not hold PD's max-replicas copies of every region.
func (h *Hooks) checkReplicas(ctx context.Context, tc *v1alpha1.TidbCluster, store v1alpha1.TiKVStore) error {
	cfg, err := h.client(tc).GetConfig(ctx)
	if err != nil {
		return fmt.Errorf("read PD replication config: %w", err)
	}
	up := UpStores(tc)
	if store.State == pdapi.StoreStateNameUp {
		up--
	}
	if uint64(max(up, 0)) < cfg.Replication.MaxReplicas { //nolint:gosec // non-negative
		msg := fmt.Sprintf("cannot remove store %s of %s: %d Up stores would remain, PD keeps %d replicas",
			store.ID, store.PodName, up, cfg.Replication.MaxReplicas)
		h.recorder.Event(tc, corev1.EventTypeWarning, "FailedScaleIn", msg)
		return flow.RequeueAfter(30*time.Second, "%s", msg)
	}
	return nil
}

// PreUpgradePod evicts the store's region leaders before its pod restarts:
// it adds an evict-leader scheduler and records the start on the pod, then
// waits until the store holds no leader or spec.tikv.evictLeaderTimeout
// passed. A single-store cluster has nowhere to move leaders and restarts
// at once.
func (h *Hooks) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	podName := names.Pod(tc.Name, names.TiKV, ordinal)
	store, ok := storeOf(tc, podName)
	if !ok || tc.Spec.TiKV.Replicas < 2 || store.LeaderCount == 0 {
		return nil
	}
	pod, err := h.pods.Pods(tc.Namespace).Get(podName)
	if err != nil {
		return fmt.Errorf("get pod %s: %w", podName, err)
	}
	begin, started := pod.Annotations[label.AnnEvictLeaderBeginTime]
	if !started {
		id, _ := strconv.ParseUint(store.ID, 10, 64)
		if err := h.client(tc).BeginEvictLeader(ctx, id); err != nil {
			return fmt.Errorf("evict leaders of store %d: %w", id, err)
		}
		if err := h.annotate(ctx, pod, label.AnnEvictLeaderBeginTime, h.clock.Now().UTC().Format(time.RFC3339)); err != nil {
			return err
		}
		return flow.Requeue("evicting %d region leaders from store %s before restarting %s", store.LeaderCount, store.ID, podName)
	}
	t, err := time.Parse(time.RFC3339, begin)
	if err == nil && h.clock.Since(t) >= evictLeaderTimeout(tc) {
		return nil
	}
	return flow.Requeue("waiting for %d region leaders to leave store %s before restarting %s", store.LeaderCount, store.ID, podName)
}

// PostUpgradePod removes the restarted store's evict-leader scheduler and
// waits (up to spec.tikv.waitLeaderTransferBackTimeout after the pod became
// Ready) until the store holds a fair share of leaders again, so the next
// eviction does not find them still moving.
func (h *Hooks) PostUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	podName := names.Pod(tc.Name, names.TiKV, ordinal)
	store, ok := storeOf(tc, podName)
	if !ok {
		return nil
	}
	id, _ := strconv.ParseUint(store.ID, 10, 64)
	evicting, err := h.client(tc).GetEvictLeaderSchedulers(ctx)
	if err != nil {
		return fmt.Errorf("list evict-leader schedulers: %w", err)
	}
	for _, s := range evicting {
		if s == id {
			if err := h.client(tc).EndEvictLeader(ctx, id); err != nil {
				return fmt.Errorf("end leader eviction of store %d: %w", id, err)
			}
			return flow.Requeue("leaders are returning to store %s of %s", store.ID, podName)
		}
	}
	fair := fairLeaderShare(tc)
	if fair < 200 || store.LeaderCount*3 >= fair*2 {
		return nil
	}
	pod, err := h.pods.Pods(tc.Namespace).Get(podName)
	if err == nil && !readySinceTime(pod).IsZero() && h.clock.Since(readySinceTime(pod)) >= waitLeaderBackTimeout(tc) {
		return nil
	}
	return flow.Requeue("waiting for leaders to return to store %s: %d of about %d", store.ID, store.LeaderCount, fair)
}

// EndUpgrade removes the evict-leader scheduler of every store of this
// cluster (live, failed or tombstoned), as the TiDB Operator does when a
// TiKV rollout finishes: a pod that was not available when the rollout
// ended never had PostUpgradePod undo its eviction, and a scheduler left
// behind would keep its store at 0 leaders forever. It errors, and is
// retried on the next sync, when PD cannot list or remove a scheduler.
func (h *Hooks) EndUpgrade(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	ours := clusterStoreIDs(tc)
	if len(ours) == 0 {
		return nil
	}
	evicting, err := h.client(tc).GetEvictLeaderSchedulers(ctx)
	if err != nil {
		return fmt.Errorf("list evict-leader schedulers: %w", err)
	}
	for _, id := range evicting {
		if !ours[id] {
			continue
		}
		if err := h.client(tc).EndEvictLeader(ctx, id); err != nil {
			return fmt.Errorf("end leader eviction of store %d: %w", id, err)
		}
		klog.FromContext(ctx).Info("removed an evict-leader scheduler left after the rollout", "store", id)
	}
	return nil
}

// clusterStoreIDs are the IDs of every store status knows for this cluster.
func clusterStoreIDs(tc *v1alpha1.TidbCluster) map[uint64]bool {
	out := map[uint64]bool{}
	add := func(id string) {
		if n, err := strconv.ParseUint(id, 10, 64); err == nil {
			out[n] = true
		}
	}
	for id := range tc.Status.TiKV.Stores {
		add(id)
	}
	for id := range tc.Status.TiKV.TombstoneStores {
		add(id)
	}
	for id := range tc.Status.TiKV.FailureStores {
		add(id)
	}
	return out
}

// PodHealthy reports whether the pod's store is Up.
func (h *Hooks) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	s, ok := storeOf(tc, podName)
	return ok && s.State == pdapi.StoreStateNameUp
}

// UpgradeBlocker holds TiKV's rollout while PD or TiFlash scale or upgrade.
func (h *Hooks) UpgradeBlocker(tc *v1alpha1.TidbCluster) string {
	return component.BlockedBy(tc, "pd", "tiflash")
}

// ForceUpgrade is never used for TiKV.
func (h *Hooks) ForceUpgrade(*v1alpha1.TidbCluster) bool { return false }

// ScaleOutStep is spec.tikv.scalePolicy.scaleOutParallelism.
func (h *Hooks) ScaleOutStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiKV.ScalePolicy.ScaleOutParallelism; p != nil {
		return *p
	}
	return 1
}

func (h *Hooks) client(tc *v1alpha1.TidbCluster) pdapi.Client { return pdClient(h.pd, tc) }

func (h *Hooks) annotate(ctx context.Context, pod *corev1.Pod, key, value string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	if _, err := h.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotate pod %s: %w", pod.Name, err)
	}
	return nil
}

// fairLeaderShare is the mean leader count of the cluster's Up stores.
func fairLeaderShare(tc *v1alpha1.TidbCluster) int32 {
	var sum, n int32
	for _, s := range tc.Status.TiKV.Stores {
		if s.State == pdapi.StoreStateNameUp {
			sum += s.LeaderCount
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

func readySinceTime(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func evictLeaderTimeout(tc *v1alpha1.TidbCluster) time.Duration {
	if s := tc.Spec.TiKV.EvictLeaderTimeout; s != nil {
		if d, err := time.ParseDuration(*s); err == nil {
			return d
		}
	}
	return 1500 * time.Minute
}

func waitLeaderBackTimeout(tc *v1alpha1.TidbCluster) time.Duration {
	if d := tc.Spec.TiKV.WaitLeaderTransferBackTimeout; d != nil {
		return d.Duration
	}
	return 400 * time.Second
}
