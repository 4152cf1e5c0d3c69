package ticdc

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// PostUpgradePod holds the rollout until the restarted pod's capture is back: present in the captures
// list and ready, as this sync observed it (status.ticdc.captures), so that the next capture is drained
// towards a complete cluster. It reads only status, as the skeleton calls it for every restarted pod.
func (c *Component) PostUpgradePod(_ context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if c.cdc == nil {
		return nil
	}
	pod := names.Pod(tc.Name, names.TiCDC, ordinal)
	if cp, ok := tc.Status.TiCDC.Captures[pod]; ok && cp.Ready {
		return nil
	}
	return flow.Requeue("waiting for the TiCDC capture of %s to rejoin after its restart", pod)
}
