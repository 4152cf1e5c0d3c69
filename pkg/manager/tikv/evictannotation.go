package tikv

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// How soon an evict-leader request is looked at again: while leaders leave
// a store to be deleted, or its recreated pod is not Ready yet (the TiDB
// Operator polls every 15 s), and while the cluster is not stable enough to
// begin an eviction (1 min).
const (
	evictPollInterval     = 15 * time.Second
	evictUnstableInterval = time.Minute
)

// MaintainPods acts on the tidb.pingcap.com/evict-leader annotations of
// TiKV pods (spec §6.4). A request is recorded in status.tikv.evictLeader
// by pod name; once every store of the cluster is Up (or Tombstone) PD's
// evict-leader scheduler begins for the pod's store (EvictLeaderBegin).
// With delete-pod the pod is deleted once its store holds no leader. The
// eviction ends (EvictLeaderEnd) and the record goes when the annotation
// is gone — for delete-pod, once the recreated pod is Ready. An annotation
// past tidb.pingcap.com/tikv-evict-leader-expiration-time is removed from
// the pod first. Waits are revisits (flow.RevisitAfter); an error of PD or
// the API server is returned.
func (c *Component) MaintainPods(ctx context.Context, tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) error {
	requests, err := c.evictRequests(ctx, tc, pods)
	if err != nil {
		return err
	}
	status := &tc.Status.TiKV
	if len(requests) == 0 && len(status.EvictLeader) == 0 {
		return nil // the common case: no PD call
	}
	c.recordEvictRequests(tc, pods, requests)
	evicting, err := c.Client(tc).GetEvictLeaderSchedulers(ctx)
	if err != nil {
		return fmt.Errorf("list evict-leader schedulers: %w", err)
	}
	podNames := make([]string, 0, len(status.EvictLeader))
	for name := range status.EvictLeader {
		podNames = append(podNames, name)
	}
	sort.Strings(podNames)
	for _, name := range podNames {
		if err := c.maintainEviction(ctx, tc, name, podOf(pods, name), requests, evicting); err != nil {
			return err
		}
	}
	if len(status.EvictLeader) == 0 {
		status.EvictLeader = nil
	}
	return nil
}

// evictRequests returns the valid evict-leader requests by pod name,
// removing from their pods the annotations that expired. An unknown value
// is logged and ignored.
func (c *Component) evictRequests(ctx context.Context, tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) (map[string]string, error) {
	out := map[string]string{}
	for _, pod := range pods {
		value, ok := pod.Annotations[label.AnnTiKVEvictLeader]
		if !ok {
			continue
		}
		if value != label.EvictLeaderNone && value != label.EvictLeaderDeletePod {
			klog.FromContext(ctx).Info("ignoring an evict-leader annotation with an unknown value",
				"pod", pod.Name, "value", value, "want", []string{label.EvictLeaderNone, label.EvictLeaderDeletePod})
			continue
		}
		expired, err := component.AnnotationExpired(pod, label.AnnTiKVEvictLeaderExpiration, c.clock.Now())
		if err != nil {
			klog.FromContext(ctx).Info("evict-leader expiration ignored", "err", err)
		}
		if expired {
			if err := c.writer.RemovePodAnnotations(ctx, tc, pod.Name, label.AnnTiKVEvictLeader, label.AnnTiKVEvictLeaderExpiration); err != nil {
				return nil, fmt.Errorf("remove the expired evict-leader request of %s: %w", pod.Name, err)
			}
			klog.FromContext(ctx).Info("evict-leader request expired; annotations removed", "pod", pod.Name)
			continue
		}
		out[pod.Name] = value
	}
	return out, nil
}

// recordEvictRequests adds a status record for every request of a pod that
// has none, or whose record is of an earlier pod of that name.
func (c *Component) recordEvictRequests(tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod, requests map[string]string) {
	status := &tc.Status.TiKV
	for name, value := range requests {
		pod := podOf(pods, name)
		if rec, ok := status.EvictLeader[name]; ok && rec != nil && !component.RecreatedSince(pod, rec.PodCreateTime.Time) {
			rec.Value = value
			continue
		}
		if status.EvictLeader == nil {
			status.EvictLeader = map[string]*v1alpha1.EvictLeaderStatus{}
		}
		status.EvictLeader[name] = &v1alpha1.EvictLeaderStatus{
			PodCreateTime: pod.CreationTimestamp, BeginTime: metav1.NewTime(c.clock.Now()), Value: value,
		}
	}
}

// maintainEviction moves the request of pod name one step: begin the
// eviction, delete the pod once its store holds no leader (delete-pod), or
// end the eviction and drop the record once the request is over.
func (c *Component) maintainEviction(ctx context.Context, tc *v1alpha1.TidbCluster, name string, pod *corev1.Pod,
	requests map[string]string, evicting []uint64) error {
	rec := tc.Status.TiKV.EvictLeader[name]
	if rec == nil {
		delete(tc.Status.TiKV.EvictLeader, name)
		return nil
	}
	store, hasStore := c.Of(tc, name)
	id, _ := strconv.ParseUint(store.ID, 10, 64)
	begun := hasStore && slices.Contains(evicting, id)
	if _, requested := requests[name]; !requested || pod == nil {
		if waitForRecreatedPod(rec, pod) {
			flow.RevisitAfter(ctx, evictPollInterval, "waiting for %s to be recreated and Ready after its leaders were evicted", name)
			return nil
		}
		return c.endEviction(ctx, tc, name, store, begun)
	}
	if !hasStore {
		flow.RevisitAfter(ctx, evictUnstableInterval, "evict-leader of %s waits for its store to register", name)
		return nil
	}
	if !begun {
		return c.beginEviction(ctx, tc, name, rec, id)
	}
	if rec.Value != label.EvictLeaderDeletePod {
		return nil
	}
	if store.LeaderCount > 0 {
		flow.RevisitAfter(ctx, evictPollInterval, "waiting for %d region leaders to leave store %s before deleting %s", store.LeaderCount, store.ID, name)
		return nil
	}
	reason := fmt.Sprintf("%s=%s: store %s holds no region leader", label.AnnTiKVEvictLeader, label.EvictLeaderDeletePod, store.ID)
	if err := c.writer.DeletePod(ctx, tc, name, apply.UIDIs(pod.UID), reason); err != nil {
		return err
	}
	flow.RevisitAfter(ctx, evictPollInterval, "waiting for %s to be recreated and Ready after its leaders were evicted", name)
	return nil
}

// waitForRecreatedPod reports whether a delete-pod request still waits for
// its pod: gone, or recreated and not Ready yet.
func waitForRecreatedPod(rec *v1alpha1.EvictLeaderStatus, pod *corev1.Pod) bool {
	if rec.Value != label.EvictLeaderDeletePod {
		return false
	}
	if pod == nil {
		return true
	}
	return component.RecreatedSince(pod, rec.PodCreateTime.Time) && !component.PodReady(pod)
}

// beginEviction adds the evict-leader scheduler of store id once every
// store of the cluster is Up or Tombstone, as the TiDB Operator does;
// otherwise it looks again later.
func (c *Component) beginEviction(ctx context.Context, tc *v1alpha1.TidbCluster, name string, rec *v1alpha1.EvictLeaderStatus, id uint64) error {
	if notUp := storesNotUp(tc); len(notUp) > 0 {
		flow.RevisitAfter(ctx, evictUnstableInterval, "evict-leader of %s waits until every store is Up (not: %v)", name, notUp)
		return nil
	}
	if err := c.Client(tc).BeginEvictLeader(ctx, id); err != nil {
		return fmt.Errorf("evict leaders of store %d (%s): %w", id, name, err)
	}
	rec.BeginTime = metav1.NewTime(c.clock.Now())
	c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonEvictLeaderBegin, "evicting region leaders from store %d of %s (%s=%s)",
		id, name, label.AnnTiKVEvictLeader, rec.Value)
	if rec.Value == label.EvictLeaderDeletePod {
		flow.RevisitAfter(ctx, evictPollInterval, "evicting region leaders from store %d before deleting %s", id, name)
	}
	return nil
}

// endEviction removes the store's evict-leader scheduler (when it runs)
// and the pod's record.
func (c *Component) endEviction(ctx context.Context, tc *v1alpha1.TidbCluster, name string, store v1alpha1.TiKVStore, begun bool) error {
	if begun {
		id, _ := strconv.ParseUint(store.ID, 10, 64)
		if err := c.Client(tc).EndEvictLeader(ctx, id); err != nil {
			return fmt.Errorf("end leader eviction of store %d (%s): %w", id, name, err)
		}
		c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonEvictLeaderEnd, "the evict-leader request of %s ended; leaders may return to store %s",
			name, store.ID)
	}
	delete(tc.Status.TiKV.EvictLeader, name)
	return nil
}

// storesNotUp names the cluster's stores that are neither Up nor Tombstone.
func storesNotUp(tc *v1alpha1.TidbCluster) []string {
	var out []string
	for _, s := range tc.Status.TiKV.Stores {
		if s.State != pdapi.StoreStateNameUp && s.State != pdapi.StoreStateNameTombstone {
			out = append(out, s.PodName+"="+s.State)
		}
	}
	sort.Strings(out)
	return out
}

// podOf returns the pod named name among pods, or nil.
func podOf(pods map[int32]*corev1.Pod, name string) *corev1.Pod {
	ord, err := names.Ordinal(name)
	if err != nil {
		return nil
	}
	if p, ok := pods[ord]; ok && p.Name == name {
		return p
	}
	return nil
}
