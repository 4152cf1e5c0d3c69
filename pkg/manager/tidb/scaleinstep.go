package tidb

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// ScaleInStep is spec.tidb.scalePolicy.scaleInParallelism: how many servers
// one scale-in removes at once (the skeleton's ScaleInStepper; default 1).
func (c *Component) ScaleInStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiDB.ScalePolicy.ScaleInParallelism; p != nil {
		return *p
	}
	return 1
}
