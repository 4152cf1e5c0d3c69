package tidb

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// Hooks are TiDB's lifecycle hooks. TiDB servers keep no data, so a pod may
// be removed or restarted without preparation.
type Hooks struct{}

var _ component.Hooks = Hooks{}

// PreScaleIn returns nil: a TiDB server needs no decommissioning.
func (Hooks) PreScaleIn(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PreUpgradePod returns nil: TiDB shuts down gracefully on SIGTERM.
func (Hooks) PreUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PostUpgradePod returns nil: there is nothing to undo.
func (Hooks) PostUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PodHealthy reports whether the pod's status port answered.
func (Hooks) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return tc.Status.TiDB.Members[podName].Health
}

// UpgradeBlocker holds TiDB's rollout while PD or TiKV scale or upgrade,
// because TiDB restarts on top of a changing storage layer add failures.
func (Hooks) UpgradeBlocker(tc *v1alpha1.TidbCluster) string {
	return component.BlockedBy(tc, "pd", "tikv")
}

// ForceUpgrade is never needed for TiDB.
func (Hooks) ForceUpgrade(*v1alpha1.TidbCluster) bool { return false }

// ScaleOutStep is spec.tidb.scalePolicy.scaleOutParallelism.
func (Hooks) ScaleOutStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiDB.ScalePolicy.ScaleOutParallelism; p != nil {
		return *p
	}
	return 1
}
