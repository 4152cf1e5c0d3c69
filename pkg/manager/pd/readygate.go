package pd

import (
	"context"
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// PostUpgradePod holds the rollout after a PD member restarted until that
// member answers ready (`GET /pd/api/v2/ready` on the member itself: PD ≥
// 8.5.2 answers 500 until it has loaded its regions; an older PD without
// the API counts as ready), as the TiDB Operator does before it restarts
// the next member. Its health in PD is PodHealthy's part. It is called for
// the restarted, available members of a rollout only, one request each.
// It errors when the member cannot be reached.
func (c *Component) PostUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	pod := names.Pod(tc.Name, names.PD, ordinal)
	opts := ClientOptions(tc)
	opts.Member = pod
	ready, err := c.pd.GetPDClient(tc.Namespace, tc.Name, opts).GetReady(ctx)
	if err != nil {
		return fmt.Errorf("ask PD member %s whether it is ready: %w", pod, err)
	}
	if !ready {
		return flow.Requeue("waiting for the restarted PD member %s to answer ready (loading its regions)", pod)
	}
	return nil
}
