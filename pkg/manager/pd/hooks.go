package pd

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// ReasonLeaderTransferred (Normal event): PD leadership was moved off a member before it restarts or leaves.
const ReasonLeaderTransferred = "PDLeaderTransferred"

// PreScaleIn deletes the member of the pod being removed from PD (the
// member named after the pod or its FQDN). It waits (a RequeueError naming
// why) while PD cannot be reached, while the members left would have no
// quorum of healthy ones, and while the member leads: leadership first
// moves to the lowest healthy other member of this cluster, and with none
// (only a peer cluster's members, or none healthy) it waits rather than
// delete the leader. It refuses to remove the last PD of a cluster whose
// other components still need it.
func (c *Component) PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if !tc.Status.PD.Synced {
		return flow.Requeue("PD must answer before a member is removed")
	}
	if ordinal == 0 && (tc.Spec.TiKV != nil || tc.Spec.TiDB != nil || tc.Spec.TiFlash != nil) {
		return flow.Ignore(fmt.Errorf("refusing to remove the last PD while other components exist"))
	}
	pod := names.Pod(tc.Name, names.PD, ordinal)
	member, _, listed := memberOfPod(tc, pod)
	if !listed {
		member = memberNameOfPod(tc, pod)
	}
	if listed && Membership(tc) > 1 {
		if why := quorumWithout(tc, member); why != "" {
			return flow.Requeue("PD member %s is not removed (scale-in): %s", member, why)
		}
		if tc.Status.PD.Leader.Name == member {
			return c.leaveLeadership(ctx, tc, pod, member)
		}
	}
	if err := c.client(tc).DeleteMember(ctx, member); err != nil {
		return fmt.Errorf("delete PD member %s: %w", member, err)
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, "PDMemberDeleted", "PD member %s deleted from PD before its pod is removed (scale-in)", member)
	return nil
}

// PreUpgradePod hands leadership away when the pod to restart leads,
// preferring a member already restarted (a higher ordinal). With
// tidb.pingcap.com/pd-check-quorum-before-upgrade it first waits until PD
// keeps a quorum without the member (quorumGate).
func (c *Component) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if !tc.Status.PD.Synced {
		return flow.Requeue("PD must answer before a member restarts")
	}
	member := memberNameOfPod(tc, names.Pod(tc.Name, names.PD, ordinal))
	if why := quorumGate(tc, member); why != "" {
		return flow.Requeue("%s", why)
	}
	if tc.Status.PD.Leader.Name != member {
		return nil
	}
	return c.transferLeader(ctx, tc, member, ordinal, true)
}

// transferLeader asks PD to move leadership from member to the best healthy
// other member and waits for the move; with no healthy candidate it lets
// the action proceed (PD elects a leader itself).
func (c *Component) transferLeader(ctx context.Context, tc *v1alpha1.TidbCluster, member string, ordinal int32, preferHigher bool) error {
	target := pickLeader(tc, member, ordinal, preferHigher)
	if target == "" {
		return nil
	}
	if err := c.client(tc).TransferPDLeader(ctx, target); err != nil {
		return fmt.Errorf("transfer PD leader from %s to %s: %w", member, target, err)
	}
	c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonLeaderTransferred, "PD leadership moved from %s to %s before %s changes", member, target, member)
	return flow.Requeue("transferring PD leadership from %s to %s", member, target)
}

// pickLeader chooses a healthy member of this cluster other than member
// (named after its pod or its pod's FQDN): with preferHigher the lowest
// ordinal above (already upgraded), else the lowest ordinal.
func pickLeader(tc *v1alpha1.TidbCluster, member string, ordinal int32, preferHigher bool) string {
	type cand struct {
		name string
		ord  int32
	}
	var cands []cand
	for name, m := range tc.Status.PD.Members {
		if name == member || !m.Health {
			continue
		}
		if _, o, ok := podOfMember(tc, name); ok {
			cands = append(cands, cand{name, o})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].ord < cands[j].ord })
	if preferHigher {
		for _, c := range cands {
			if c.ord > ordinal {
				return c.name
			}
		}
	}
	if len(cands) > 0 {
		return cands[0].name
	}
	return ""
}

// PodHealthy reports the health in PD of the pod's member (named after the
// pod or its FQDN); false when PD does not list it.
func (c *Component) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	_, m, _ := memberOfPod(tc, podName)
	return m.Health
}

// ForceUpgrade restarts every PD pod at once when PD cannot answer and
// either the cluster asks for it (tidb.pingcap.com/force-upgrade: "true") or
// it has a single member: a PD that cannot start on its configuration
// would otherwise block its own fix.
func (c *Component) ForceUpgrade(tc *v1alpha1.TidbCluster) bool {
	if tc.Status.PD.Synced {
		return false
	}
	return component.ForceUpgradeAsked(tc) || tc.Spec.PD.Replicas < 2
}

func (c *Component) client(tc *v1alpha1.TidbCluster) pdapi.Client {
	return c.pd.GetPDClient(tc.Namespace, tc.Name, ClientOptions(tc))
}

// NotReady reports PDUnhealthy until every desired member is healthy.
func (c *Component) NotReady(tc *v1alpha1.TidbCluster) (reason, message string) {
	healthy := 0
	for _, m := range tc.Status.PD.Members {
		if m.Health {
			healthy++
		}
	}
	if healthy != int(tc.Spec.PD.Replicas) {
		return "PDUnhealthy", fmt.Sprintf("PD(s) are not healthy: %d of %d", healthy, tc.Spec.PD.Replicas)
	}
	return "", ""
}
