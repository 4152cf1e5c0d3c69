package pd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// FailoverReplicas is one extra member per failed member already deleted
// from PD, so the cluster keeps its size while the failed one is rebuilt.
func (c *Component) FailoverReplicas(tc *v1alpha1.TidbCluster) int32 {
	n := int32(0)
	for _, f := range tc.Status.PD.FailureMembers {
		if f.MemberDeleted {
			n++
		}
	}
	return n
}

// Failover replaces a PD member unhealthy for longer than the grace
// period: it records the failure, then — only while a quorum of the other
// members is healthy — deletes the member from PD, its pod and its data
// volume, so the StatefulSet recreates it empty and it joins again as a new
// member; one extra member is added meanwhile. It recovers (the extra
// member leaves through the normal scale-in) once every desired member is
// healthy. One step per sync. With --detect-node-failure a failed member
// on a down host is marked so, and with the cluster's auto-failure-recovery
// annotation its pod is restarted elsewhere first (failover_hostdown.go).
func (c *Component) Failover(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.PD
	if err := c.removeOrphanMembers(ctx, tc); err != nil {
		return err
	}
	if allMembersHealthy(tc) {
		if len(s.FailureMembers) > 0 {
			c.recorder.Eventf(tc, corev1.EventTypeNormal, "Recovery", "every PD member is healthy again; removing %d failover member(s)", len(s.FailureMembers))
		}
		s.FailureMembers = nil
		return nil
	}
	if !c.failover.Enabled || !s.Synced || component.MaxFailover(tc.Spec.PD.MaxFailoverCount) == 0 {
		return nil
	}
	// Quorum is counted from the members PD has (a cluster scaling out from
	// one member has a quorum of one), and only a step that removes a member
	// waits for it: without a failure to act on, nothing blocks the sync.
	healthy, members := HealthyMembers(tc), Membership(tc)
	hasQuorum := healthy > members/2
	for name, f := range s.FailureMembers {
		if f.MemberDeleted {
			continue
		}
		if s.Members[name].Health {
			delete(s.FailureMembers, name)
			continue
		}
		if ready, err := c.hostDown(ctx, tc, name, failurePod(name, f)); err != nil || !ready {
			return err
		}
		if !hasQuorum {
			return flow.Requeue("PD failover of %s waits: %d of %d PD members healthy, more than half needed", name, healthy, members)
		}
		return c.replaceMember(ctx, tc, name, s.FailureMembers[name])
	}
	if !hasQuorum || c.FailoverReplicas(tc) >= component.MaxFailover(tc.Spec.PD.MaxFailoverCount) {
		return nil
	}
	return c.markFailure(tc)
}

// markFailure records the first desired member unhealthy past the period,
// by member name (the pod's name or FQDN), with its pod's name.
func (c *Component) markFailure(tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.PD
	now := c.clock.Now()
	for o := int32(0); o < tc.Spec.PD.Replicas; o++ {
		pod := names.Pod(tc.Name, names.PD, o)
		name, m, ok := memberOfPod(tc, pod)
		if _, recorded := s.FailureMembers[name]; recorded || !ok || m.Health ||
			!component.Expired(m.LastTransitionTime.Time, c.failover.Period, now) {
			continue
		}
		if s.FailureMembers == nil {
			s.FailureMembers = map[string]v1alpha1.PDFailureMember{}
		}
		s.FailureMembers[name] = v1alpha1.PDFailureMember{PodName: pod, MemberID: m.ID, CreatedAt: metav1.NewTime(now),
			PVCUIDSet: c.hosts.PVCUIDs(tc, pod)}
		c.recorder.Eventf(tc, corev1.EventTypeWarning, "PDMemberUnhealthy", "PD member %s is unhealthy; it will be replaced", name)
		return flow.Requeue("PD member %s failed; replacing it", name)
	}
	return nil
}

// replaceMember deletes a failed member from PD, then its PVCs and its pod.
func (c *Component) replaceMember(ctx context.Context, tc *v1alpha1.TidbCluster, name string, f v1alpha1.PDFailureMember) error {
	id, err := strconv.ParseUint(f.MemberID, 10, 64)
	if err != nil {
		return fmt.Errorf("member ID %q of %s: %w", f.MemberID, name, err)
	}
	if err := c.client(tc).DeleteMemberByID(ctx, id); err != nil {
		return fmt.Errorf("delete PD member %s: %w", name, err)
	}
	pod := failurePod(name, f)
	ordinal, err := names.Ordinal(pod)
	if err != nil {
		return err
	}
	kept, err := c.deletePodAndData(ctx, tc, pod, names.PVC(dataVolume, tc.Name, names.PD, ordinal), f)
	if err != nil {
		return err
	}
	f.MemberDeleted = true
	tc.Status.PD.FailureMembers[name] = f
	done := " with its pod and data; it rejoins as a new member"
	if kept {
		done = "; pod " + pod + " kept: it already runs a new member on new PVCs"
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, "PDMemberDeleted", "PD member %s deleted%s", name, done)
	return nil
}

// removeOrphanMembers deletes from PD the members of this cluster whose pod
// the StatefulSet no longer has nor wants: a pod being scaled in can join PD
// after its member was deleted (it was still starting), and such a member
// would stay in PD, unhealthy, for ever. Members of ordinals still wanted,
// or whose pod still exists, are left to scale-in and failover.
func (c *Component) removeOrphanMembers(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.PD
	if !s.Synced || s.StatefulSet == nil {
		return nil
	}
	wanted := max(tc.Spec.PD.Replicas+c.FailoverReplicas(tc), s.StatefulSet.Replicas)
	for name, m := range s.Members {
		pod, ordinal, ok := podOfMember(tc, name)
		if !ok || ordinal < wanted || c.podCached(tc, pod) {
			continue
		}
		id, err := strconv.ParseUint(m.ID, 10, 64)
		if err != nil {
			continue
		}
		if err := c.client(tc).DeleteMemberByID(ctx, id); err != nil {
			return fmt.Errorf("delete PD member %s, which has no pod: %w", name, err)
		}
		delete(s.Members, name)
		c.recorder.Eventf(tc, corev1.EventTypeNormal, "PDMemberDeleted",
			"PD member %s has no pod (ordinal %d, %d wanted) and was removed from PD", name, ordinal, wanted)
	}
	return nil
}

// podCached reports whether pod of tc is in the pod cache. A pod a spare
// or scale-out just created can join PD before the StatefulSet's status
// counts it: such a member is not an orphan.
func (c *Component) podCached(tc *v1alpha1.TidbCluster, pod string) bool {
	if c.meta == nil || c.meta.pods == nil {
		return false
	}
	_, err := c.meta.pods.Pods(tc.Namespace).Get(pod)
	return err == nil
}

// anyPodReady reports whether a PD pod of tc is Ready in the pod cache
// (true without a pod cache). While none is, PD is not asked: a cluster
// whose PD pods are still being scheduled or started would otherwise cost a
// failed request per sync, and the StatefulSet's status change when a pod
// turns Ready wakes the sync that asks.
func (c *Component) anyPodReady(tc *v1alpha1.TidbCluster) bool {
	if c.meta == nil || c.meta.pods == nil {
		return true
	}
	pods, err := c.meta.pods.Pods(tc.Namespace).List(labels.SelectorFromSet(component.Labels(tc, names.PD)))
	if err != nil {
		return true
	}
	return slices.ContainsFunc(pods, component.PodReady)
}

// allMembersHealthy reports whether the member of every desired pod is healthy.
func allMembersHealthy(tc *v1alpha1.TidbCluster) bool {
	for o := int32(0); o < tc.Spec.PD.Replicas; o++ {
		if _, m, _ := memberOfPod(tc, names.Pod(tc.Name, names.PD, o)); !m.Health {
			return false
		}
	}
	return true
}

// failurePod is the pod of failure record name: its PodName, or for a
// record without one the pod the member name is of.
func failurePod(name string, f v1alpha1.PDFailureMember) string {
	if f.PodName != "" {
		return f.PodName
	}
	pod, _, _ := strings.Cut(name, ".")
	return pod
}
