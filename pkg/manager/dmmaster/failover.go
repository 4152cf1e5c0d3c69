package dmmaster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Event reasons of dm-master's failover (spec dm.md §9).
const (
	// ReasonMemberUnhealthy (Warning): a member is unhealthy while failover looks.
	ReasonMemberUnhealthy = "MasterMemberUnhealthy"
	// ReasonFailureMarked (Warning): a member unhealthy past the period is recorded for replacement.
	ReasonFailureMarked = "Unhealthy"
	// ReasonMemberDeleted (Warning): a recorded member, its pod and its PVC were deleted.
	ReasonMemberDeleted = "DMMasterMemberDeleted"
)

var _ component.FailoverHandler[owner] = (*Component)(nil)

// FailoverReplicas is one extra pod per failure member already deleted.
func (c *Component) FailoverReplicas(dc owner) int32 { return int32(deletedFailures(dc)) } //nolint:gosec // a small count

// Failover replaces a dm-master member unhealthy for longer than the
// period, one step per sync: it first records the member (with its PVC's
// UID) and requeues, then deletes the member from dm-master, its pod and
// that PVC (only if its UID is the recorded one), so the ordinal comes back
// empty and joins through discovery while an extra pod keeps the count.
// Both steps need status synced and a quorum of healthy members, and stop
// once maxFailoverCount members were deleted (0 disables failover). Once
// every desired member is healthy on a Ready pod the records are cleared
// and the extra pods leave through scale-in. It errors when dm-master or the
// API refuses a deletion, and waits without a quorum.
func (c *Component) Failover(ctx context.Context, dc owner) error {
	st := &dc.Status.Master
	if len(st.FailureMembers) > 0 && c.allHealthy(dc) {
		st.FailureMembers = nil
		return nil
	}
	undeleted := c.undeletedFailure(dc)
	started := st.StatefulSet != nil && st.StatefulSet.Replicas == dc.Spec.Master.Replicas+c.FailoverReplicas(dc)
	// Failover looks only once every pod started and a member is unhealthy,
	// or to finish a replacement it began.
	needed := started && !c.allHealthy(dc) || undeleted != ""
	if !c.failover.Enabled || !st.Synced || !needed {
		return nil
	}
	healthy := 0
	for _, m := range st.Members {
		if m.Health {
			healthy++
		} else {
			c.eventf(dc, corev1.EventTypeWarning, ReasonMemberUnhealthy, "%s(%s) is unhealthy", m.Name, m.ID)
		}
	}
	if healthy <= len(st.Members)/2 {
		return flow.Requeue("dm-master has %d healthy of %d members, not a quorum; cannot fail over", healthy, len(st.Members))
	}
	if int32(deletedFailures(dc)) >= component.MaxFailover(dc.Spec.Master.MaxFailoverCount) { //nolint:gosec // a small count
		return nil
	}
	if undeleted != "" {
		return c.replace(ctx, dc, undeleted)
	}
	return c.markFailure(dc)
}

// allHealthy reports whether every desired ordinal's member is healthy and the StatefulSet has as many Ready pods.
func (c *Component) allHealthy(dc owner) bool {
	st := &dc.Status.Master
	if !component.PodsReady(&st.ComponentStatus, dc.Spec.Master.Replicas) {
		return false
	}
	for o := range dc.Spec.Master.Replicas {
		if !st.Members[names.DMMasterPod(dc.Name, o)].Health {
			return false
		}
	}
	return true
}

func (c *Component) undeletedFailure(dc owner) string {
	for pod, f := range dc.Status.Master.FailureMembers {
		if !f.MemberDeleted {
			return pod
		}
	}
	return ""
}

// markFailure records the first desired member unhealthy past the period
// whose PVC exists, and requeues.
func (c *Component) markFailure(dc owner) error {
	st := &dc.Status.Master
	now := c.clock.Now()
	for o := range dc.Spec.Master.Replicas {
		pod := names.DMMasterPod(dc.Name, o)
		m, ok := st.Members[pod]
		if _, recorded := st.FailureMembers[pod]; recorded || !ok || m.Health ||
			!component.Expired(m.LastTransitionTime.Time, c.failover.Period, now) {
			continue
		}
		pvcName := names.PVC(names.DMMasterComponent, dc.Name, names.DMMasterComponent, o)
		if c.pvcs == nil {
			return nil
		}
		pvc, err := c.pvcs.PersistentVolumeClaims(dc.Namespace).Get(pvcName)
		if err != nil {
			return fmt.Errorf("PVC %s of failed dm-master %s: %w", pvcName, pod, err)
		}
		if st.FailureMembers == nil {
			st.FailureMembers = map[string]v1alpha1.MasterFailureMember{}
		}
		st.FailureMembers[pod] = v1alpha1.MasterFailureMember{PodName: pod, MemberID: m.ID, PVCUID: pvc.UID, CreatedAt: metav1.NewTime(now)}
		c.eventf(dc, corev1.EventTypeWarning, ReasonFailureMarked, "dm-master pod[%s] is unhealthy, msg:dm-master member[%s] is unhealthy", pod, m.ID)
		return flow.Requeue("dm-master %s failed; replacing it", pod)
	}
	return nil
}

// replace deletes the recorded member from dm-master, its pod and its PVC
// (if it is still the recorded one), and marks the record deleted.
func (c *Component) replace(ctx context.Context, dc owner, pod string) error {
	cl := Client(c.ctl, dc)
	if cl == nil || c.writer == nil {
		return nil
	}
	f := dc.Status.Master.FailureMembers[pod]
	if err := cl.DeleteMaster(ctx, pod); err != nil {
		return fmt.Errorf("delete failed dm-master member %s: %w", pod, err)
	}
	c.eventf(dc, corev1.EventTypeWarning, ReasonMemberDeleted, "[%s/%s] deleted from dmcluster", dc.Namespace, pod)
	why := "failover of dm-master " + pod
	if err := c.writer.DeletePod(ctx, dc, pod, nil, why); err != nil {
		return err
	}
	ordinal, err := names.Ordinal(pod)
	if err != nil {
		return err
	}
	pvc := names.PVC(names.DMMasterComponent, dc.Name, names.DMMasterComponent, ordinal)
	if err := c.writer.DeletePVC(ctx, dc, pvc, &metav1.Preconditions{UID: &f.PVCUID}, why); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	f.MemberDeleted = true
	dc.Status.Master.FailureMembers[pod] = f
	delete(dc.Status.Master.Members, pod)
	return nil
}
