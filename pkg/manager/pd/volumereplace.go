package pd

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

var _ component.VolumeReplacer[*v1alpha1.TidbCluster] = (*Component)(nil)

// replaceRefusedRecheck is how soon a replacement refused for PD's quorum
// is looked at again.
const replaceRefusedRecheck = time.Minute

// SpareVolumeReplicas is spec.pd.spareVolReplaceReplicas (1 when unset):
// the extra PD members that keep the quorum while one is replaced.
func (c *Component) SpareVolumeReplicas(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.PD.SpareVolReplaceReplicas; p != nil {
		return *p
	}
	return 1
}

// PrepareVolumeReplace takes the PD member of pod out of PD before its
// volumes are replaced: it waits while PD does not answer or is not in
// phase Normal, refuses (Warning ReplaceVolumeRefused, looked at again in
// a minute) when the members left would have no quorum of healthy ones,
// moves leadership off the member when it leads (waiting while no other
// healthy member of this cluster can take it), then deletes the member.
// It returns nil once PD no longer lists the member; a pod PD does not
// list is released at once only when it is not Ready (a Ready one may not
// show yet). A member PD lists for the pod but with another ID than the
// pod's member-id label belongs to a pod created again already: the
// request waits for the cache.
func (c *Component) PrepareVolumeReplace(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod) error {
	s := &tc.Status.PD
	if !s.Synced {
		return flow.Requeue("PD must answer before member %s leaves", pod.Name)
	}
	name, m, ok := memberOfPod(tc, pod.Name)
	if !ok {
		if !component.PodReady(pod) {
			return nil // deleted from PD already, or never joined: no data of PD's on the volumes
		}
		return flow.Requeue("pod %s is Ready but PD lists no member of it yet", pod.Name)
	}
	if id := pod.Labels[label.MemberIDLabelKey]; id != "" && id != m.ID {
		return flow.Requeue("PD member %s has ID %s, pod %s was labelled %s: waiting for the pod cache", name, m.ID, pod.Name, id)
	}
	if s.Phase != v1alpha1.NormalPhase {
		return flow.Requeue("PD is in phase %s", s.Phase)
	}
	if why := quorumWithout(tc, name); why != "" {
		msg := fmt.Sprintf("PD member %s is not removed for its volume replacement: %s", name, why)
		c.recorder.Event(tc, corev1.EventTypeWarning, component.ReasonReplaceVolumeRefused, msg)
		return flow.RequeueAfter(replaceRefusedRecheck, "%s", msg)
	}
	if s.Leader.Name == name {
		if err := c.leaveLeadership(ctx, tc, pod.Name, name); err != nil {
			return err
		}
	}
	if err := c.client(tc).DeleteMember(ctx, name); err != nil {
		return fmt.Errorf("delete PD member %s: %w", name, err)
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, "PDMemberDeleted",
		"PD member %s deleted from PD before its volumes are replaced; it joins again as a new member", name)
	delete(s.Members, name) // PD no longer lists it; the next observation says so too
	return nil
}

// leaveLeadership moves PD leadership off member (pod's), and always
// returns a wait: the member is deleted only once PD reports another
// leader. With no healthy member of this cluster to take over (peer
// clusters' members are not asked), it waits rather than delete the leader.
func (c *Component) leaveLeadership(ctx context.Context, tc *v1alpha1.TidbCluster, pod, member string) error {
	ordinal, err := names.Ordinal(pod)
	if err != nil {
		return err
	}
	if pickLeader(tc, member, ordinal, false) == "" {
		return flow.Requeue("PD member %s leads and no other healthy PD member of this cluster can take leadership: waiting before deleting it", member)
	}
	if err := c.transferLeader(ctx, tc, member, ordinal, false); err != nil {
		return err
	}
	return flow.Requeue("PD member %s still leads: waiting before deleting it", member)
}

// quorumWithout says why PD would lose its quorum if member left ("" when
// it would not): the members that remain (this cluster's and its peers')
// must be at least one, and more than half of them healthy.
func quorumWithout(tc *v1alpha1.TidbCluster, member string) string {
	healthy, total := HealthyMembers(tc), Membership(tc)
	if tc.Status.PD.Members[member].Health {
		healthy--
	}
	total--
	switch {
	case total < 1:
		return "it is the only PD member (set spec.pd.spareVolReplaceReplicas to add a spare one first)"
	case 2*healthy <= total:
		return fmt.Sprintf("%d of the %d PD members left would be healthy: no quorum", healthy, total)
	}
	return ""
}
