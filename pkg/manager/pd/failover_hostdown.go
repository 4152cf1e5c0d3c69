package pd

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// hostDown runs spec §8.4 on the failure record of member name (of pod) before the
// member is deleted: with --detect-node-failure a record whose PVCs are
// known is marked host-down when its node is; with the cluster's
// auto-failure-recovery annotation a host-down member's pod is first
// restarted on another node, and the member may be deleted (ready) only
// once the new pod ran for the restart gap and the member still fails.
func (c *Component) hostDown(ctx context.Context, tc *v1alpha1.TidbCluster, name, pod string) (ready bool, err error) {
	s := &tc.Status.PD
	f := s.FailureMembers[name]
	if !f.HostDown && len(f.PVCUIDSet) > 0 {
		down, err := c.hosts.MarkHostDown(ctx, tc, "PD member "+name, pod, f.CreatedAt.Time)
		if err != nil {
			return false, err
		}
		f.HostDown = down
		s.FailureMembers[name] = f
	}
	if !f.HostDown || !component.AutoRecovery(tc) {
		return true, nil
	}
	return c.hosts.Restarted(ctx, tc, pod, f.CreatedAt.Time)
}

// deletePodAndData deletes a deleted member's PVCs and pod: for a
// host-down record its own recorded PVCs and the pod by DeletePodAndPVCs
// (grace period 0 only when its node is not Ready or gone; kept when the
// pod already runs a new member), otherwise its data PVC and pod by name.
func (c *Component) deletePodAndData(ctx context.Context, tc *v1alpha1.TidbCluster, pod, pvc string, f v1alpha1.PDFailureMember) (kept bool, err error) {
	why := "failover of PD pod " + pod
	if f.HostDown && len(f.PVCUIDSet) > 0 && c.hosts != nil {
		return c.hosts.DeletePodAndPVCs(ctx, tc, pod, f.PVCUIDSet, why+" (host down)")
	}
	if err := c.writer.DeletePVC(ctx, tc, pvc, nil, why); err != nil {
		return false, err
	}
	return false, c.writer.DeletePod(ctx, tc, pod, nil, why)
}
