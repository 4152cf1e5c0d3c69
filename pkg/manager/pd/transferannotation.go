package pd

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// How soon a transfer-leader request is looked at again: after asking PD to
// move leadership (to see the new leader), and while PD is not stable.
const (
	transferPollInterval     = 5 * time.Second
	transferUnstableInterval = time.Minute
)

// MaintainPods acts on the tidb.pingcap.com/pd-transfer-leader annotations
// of PD pods (spec §6.4), one pod per sync, lowest ordinal first. While PD
// is stable (Normal phase, answering, and a quorum left without the pod)
// leadership moves off an annotated leader to a healthy member (the PD
// upgrade's transfer, PDLeaderTransferred); then, with delete-pod, the pod
// is deleted. An annotation past
// tidb.pingcap.com/pd-evict-leader-expiration-time is removed from the pod.
// Waits are revisits (flow.RevisitAfter); an error of PD or the API server
// is returned.
func (c *Component) MaintainPods(ctx context.Context, tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) error {
	ordinals := make([]int32, 0, len(pods))
	for o := range pods {
		ordinals = append(ordinals, o)
	}
	slices.Sort(ordinals)
	for _, o := range ordinals {
		pod := pods[o]
		value, ok, err := c.transferRequest(ctx, tc, pod)
		if err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		return c.transferOff(ctx, tc, pod, o, value)
	}
	return nil
}

// transferRequest returns the pod's valid, unexpired transfer-leader
// request, removing an expired one from the pod.
func (c *Component) transferRequest(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod) (string, bool, error) {
	value, ok := pod.Annotations[label.AnnPDTransferLeader]
	if !ok || pod.DeletionTimestamp != nil {
		return "", false, nil
	}
	if value != label.EvictLeaderNone && value != label.EvictLeaderDeletePod {
		klog.FromContext(ctx).Info("ignoring a pd-transfer-leader annotation with an unknown value", "pod", pod.Name, "value", value)
		return "", false, nil
	}
	expired, err := component.AnnotationExpired(pod, label.AnnPDTransferLeaderExpiration, c.clock.Now())
	if err != nil {
		klog.FromContext(ctx).Info("pd-transfer-leader expiration ignored", "err", err)
	}
	if expired {
		if err := c.writer.RemovePodAnnotations(ctx, tc, pod.Name, label.AnnPDTransferLeader, label.AnnPDTransferLeaderExpiration); err != nil {
			return "", false, fmt.Errorf("remove the expired transfer-leader request of %s: %w", pod.Name, err)
		}
		return "", false, nil
	}
	return value, true, nil
}

// transferOff moves leadership off pod when it leads, else (delete-pod)
// deletes it; both wait while PD is not stable.
func (c *Component) transferOff(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod, ordinal int32, value string) error {
	member := memberNameOfPod(tc, pod.Name)
	if reason := unstable(tc, member); reason != "" {
		flow.RevisitAfter(ctx, transferUnstableInterval, "%s=%s on %s waits: %s", label.AnnPDTransferLeader, value, pod.Name, reason)
		return nil
	}
	if err := c.readLeader(ctx, tc); err != nil {
		return err
	}
	if tc.Status.PD.Leader.Name == member {
		if pickLeader(tc, member, ordinal, false) == "" {
			flow.RevisitAfter(ctx, transferUnstableInterval, "no healthy PD member of this cluster can take leadership from %s", member)
			return nil
		}
		err := c.transferLeader(ctx, tc, member, ordinal, false)
		if re, waiting := flow.AsRequeue(err); waiting {
			flow.RevisitAfter(ctx, transferPollInterval, "%s", re.Reason)
			return nil
		}
		return err
	}
	if value != label.EvictLeaderDeletePod {
		return nil
	}
	reason := fmt.Sprintf("%s=%s: leadership is on %s", label.AnnPDTransferLeader, value, tc.Status.PD.Leader.Name)
	return c.writer.DeletePod(ctx, tc, pod.Name, apply.UIDIs(pod.UID), reason)
}

// unstable says why PD may not lose or hand over a member now ("" when it
// may): it upgrades or scales, does not answer, or would be left without a
// quorum of healthy members without member, as the TiDB Operator's
// IsPDStable asks.
func unstable(tc *v1alpha1.TidbCluster, member string) string {
	s := &tc.Status.PD
	switch {
	case s.Phase != "" && s.Phase != v1alpha1.NormalPhase:
		return fmt.Sprintf("PD is in phase %s", s.Phase)
	case !s.Synced:
		return "PD does not answer"
	}
	healthy, total := HealthyMembers(tc), Membership(tc)
	if s.Members[member].Health {
		healthy--
	}
	if 2*healthy <= total {
		return fmt.Sprintf("without %s, %d of %d PD members would be healthy: no quorum", member, healthy, total)
	}
	return ""
}
