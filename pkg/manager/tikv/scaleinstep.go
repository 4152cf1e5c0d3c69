package tikv

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// ScaleInStep is spec.tikv.scalePolicy.scaleInParallelism: how many stores
// one scale-in removes at once (the skeleton's ScaleInStepper; default 1).
func (c *Component) ScaleInStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiKV.ScalePolicy.ScaleInParallelism; p != nil {
		return *p
	}
	return 1
}
