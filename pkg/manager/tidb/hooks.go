package tidb

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// Hooks are TiDB's lifecycle hooks. TiDB servers keep no data, so a pod may
// be removed or restarted without preparation; an upgraded pod counts once
// its status port answers.
type Hooks struct{}

var _ component.Hooks = Hooks{}

// PreScaleIn returns nil: a TiDB server needs no decommissioning.
func (Hooks) PreScaleIn(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PreUpgradePod returns nil: TiDB shuts down gracefully on SIGTERM.
func (Hooks) PreUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// UpgradedPodHealthy reports the pod's health as last observed.
func (Hooks) UpgradedPodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return tc.Status.TiDB.Members[podName].Health
}
