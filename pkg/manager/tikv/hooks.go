package tikv

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Event reasons of TiKV's leader eviction around a restart.
const (
	// ReasonEvictLeaderBegin (Normal): an evict-leader scheduler was added for the store about to restart.
	ReasonEvictLeaderBegin = "EvictLeaderBegin"
	// ReasonEvictLeaderEnd (Normal): the restarted store's evict-leader scheduler was removed.
	ReasonEvictLeaderEnd = "EvictLeaderEnd"
)

// PreUpgradePod evicts the store's region leaders before its pod restarts:
// it adds an evict-leader scheduler and records the start on the pod, then
// waits until the store holds no leader or spec.tikv.evictLeaderTimeout
// passed. A single-store cluster has nowhere to move leaders and restarts
// at once. With tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade
// it first waits until every store is Up (allStoresUpGate).
func (c *Component) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if why := allStoresUpGate(tc); why != "" {
		return flow.Requeue("%s", why)
	}
	podName := names.Pod(tc.Name, names.TiKV, ordinal)
	store, ok := c.Of(tc, podName)
	if !ok || tc.Spec.TiKV.Replicas < 2 || store.LeaderCount == 0 {
		return nil
	}
	pod, err := c.pods.Pods(tc.Namespace).Get(podName)
	if err != nil {
		return fmt.Errorf("get pod %s: %w", podName, err)
	}
	begin, started := pod.Annotations[label.AnnEvictLeaderBeginTime]
	if !started {
		id, _ := strconv.ParseUint(store.ID, 10, 64)
		if err := c.Client(tc).BeginEvictLeader(ctx, id); err != nil {
			return fmt.Errorf("evict leaders of store %d: %w", id, err)
		}
		if err := c.writer.AnnotatePod(ctx, tc, pod.Name, map[string]string{label.AnnEvictLeaderBeginTime: c.clock.Now().UTC().Format(time.RFC3339)}); err != nil {
			return err
		}
		c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonEvictLeaderBegin, "evicting %d region leaders from store %s before restarting %s (at most %v)",
			store.LeaderCount, store.ID, podName, evictLeaderTimeout(tc))
		return flow.Requeue("evicting %d region leaders from store %s before restarting %s", store.LeaderCount, store.ID, podName)
	}
	t, err := time.Parse(time.RFC3339, begin)
	if err == nil && c.clock.Since(t) >= evictLeaderTimeout(tc) {
		return nil
	}
	if err := c.keepEvicting(ctx, tc, store, podName); err != nil {
		return err
	}
	return flow.Requeue("waiting for %d region leaders to leave store %s before restarting %s", store.LeaderCount, store.ID, podName)
}

// keepEvicting adds the store's evict-leader scheduler again when PD no
// longer has it while its pod still waits for the leaders to leave (a PD
// restored from a backup, a user or tool that removed it, a PD that lost
// it): without it the leaders never leave and the restart waits for the
// whole eviction timeout. It errors when PD cannot list or add schedulers.
func (c *Component) keepEvicting(ctx context.Context, tc *v1alpha1.TidbCluster, store v1alpha1.TiKVStore, podName string) error {
	id, _ := strconv.ParseUint(store.ID, 10, 64)
	evicting, err := c.Client(tc).GetEvictLeaderSchedulers(ctx)
	if err != nil {
		return fmt.Errorf("list evict-leader schedulers: %w", err)
	}
	if slices.Contains(evicting, id) {
		return nil
	}
	if err := c.Client(tc).BeginEvictLeader(ctx, id); err != nil {
		return fmt.Errorf("evict leaders of store %d again: %w", id, err)
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonEvictLeaderBegin, "PD had lost the evict-leader scheduler of store %s; added it again before restarting %s (%d region leaders left)",
		store.ID, podName, store.LeaderCount)
	return nil
}

// PostUpgradePod removes the restarted store's evict-leader scheduler and
// waits (up to spec.tikv.waitLeaderTransferBackTimeout after the pod became
// Ready) until the store holds a fair share of leaders again, so the next
// eviction does not find them still moving.
func (c *Component) PostUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	podName := names.Pod(tc.Name, names.TiKV, ordinal)
	store, ok := c.Of(tc, podName)
	if !ok || tc.Status.TiKV.EvictLeader[podName] != nil {
		return nil // leaders stay away while the pod's evict-leader annotation asks (evictannotation.go)
	}
	id, _ := strconv.ParseUint(store.ID, 10, 64)
	evicting, err := c.Client(tc).GetEvictLeaderSchedulers(ctx)
	if err != nil {
		return fmt.Errorf("list evict-leader schedulers: %w", err)
	}
	for _, s := range evicting {
		if s == id {
			if err := c.Client(tc).EndEvictLeader(ctx, id); err != nil {
				return fmt.Errorf("end leader eviction of store %d: %w", id, err)
			}
			c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonEvictLeaderEnd, "%s restarted; leaders may return to store %s", podName, store.ID)
			return flow.Requeue("leaders are returning to store %s of %s", store.ID, podName)
		}
	}
	fair := fairLeaderShare(tc)
	if fair < 200 || store.LeaderCount*3 >= fair*2 {
		return nil
	}
	pod, err := c.pods.Pods(tc.Namespace).Get(podName)
	if err == nil && !readySinceTime(pod).IsZero() && c.clock.Since(readySinceTime(pod)) >= waitLeaderBackTimeout(tc) {
		return nil
	}
	return flow.Requeue("waiting for leaders to return to store %s: %d of about %d", store.ID, store.LeaderCount, fair)
}

// EndUpgrade removes the evict-leader scheduler of every store of this
// cluster (live, failed or tombstoned), as the TiDB Operator does when a
// TiKV rollout finishes: a pod that was not available when the rollout
// ended never had PostUpgradePod undo its eviction, and a scheduler left
// behind would keep its store at 0 leaders forever. It errors, and is
// retried on the next sync, when PD cannot list or remove a scheduler. The
// stores of pods under an evict-leader annotation keep theirs.
func (c *Component) EndUpgrade(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	ours := c.StoreIDs(tc)
	for pod := range tc.Status.TiKV.EvictLeader {
		if s, ok := c.Of(tc, pod); ok {
			id, _ := strconv.ParseUint(s.ID, 10, 64)
			delete(ours, id)
		}
	}
	if len(ours) == 0 {
		return nil
	}
	evicting, err := c.Client(tc).GetEvictLeaderSchedulers(ctx)
	if err != nil {
		return fmt.Errorf("list evict-leader schedulers: %w", err)
	}
	for _, id := range evicting {
		if !ours[id] {
			continue
		}
		if err := c.Client(tc).EndEvictLeader(ctx, id); err != nil {
			return fmt.Errorf("end leader eviction of store %d: %w", id, err)
		}
		klog.FromContext(ctx).Info("removed an evict-leader scheduler left after the rollout", "store", id)
	}
	return nil
}

// Traits says: TiKV's rollout waits while PD or TiFlash scale or upgrade
// (spec §6.3).
func (c *Component) Traits() component.Traits {
	return component.Traits{UpgradeBlockers: []string{names.PD, names.TiFlash}}
}

// ScaleOutStep is spec.tikv.scalePolicy.scaleOutParallelism.
func (c *Component) ScaleOutStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiKV.ScalePolicy.ScaleOutParallelism; p != nil {
		return *p
	}
	return 1
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
