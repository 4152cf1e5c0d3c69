package unsupported

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TidbCluster lists the TidbCluster fields nothing acts on yet.
var TidbCluster = []Field[v1alpha1.TidbCluster]{
	{
		Path:    "spec.pdms",
		Set:     func(tc *v1alpha1.TidbCluster) bool { return len(tc.Spec.PDMS) > 0 },
		Example: func(tc *v1alpha1.TidbCluster) { tc.Spec.PDMS = []*v1alpha1.PDMSSpec{{Name: "tso"}} },
	},
	{
		Path: "spec.pd.mode",
		Set:  func(tc *v1alpha1.TidbCluster) bool { return tc.Spec.PD != nil && tc.Spec.PD.Mode == "ms" },
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD = pdOf(tc)
			tc.Spec.PD.Mode = "ms"
		},
	},
	{
		Path: "spec.pd.enableDashboardInternalProxy",
		Why:  "deprecated: the TiDB Operator v1.6 ignores it too; PD serves its dashboard itself",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return tc.Spec.PD != nil && tc.Spec.PD.EnableDashboardInternalProxy != nil
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD = pdOf(tc)
			tc.Spec.PD.EnableDashboardInternalProxy = ptr(true)
		},
	},
}

// pdOf returns tc's PD spec, or a new one.
func pdOf(tc *v1alpha1.TidbCluster) *v1alpha1.PDSpec {
	if tc.Spec.PD != nil {
		return tc.Spec.PD
	}
	return &v1alpha1.PDSpec{}
}
