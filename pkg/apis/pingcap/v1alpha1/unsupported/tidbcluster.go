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
	{
		Path:    "spec.pd.initWaitTime",
		Set:     func(tc *v1alpha1.TidbCluster) bool { return tc.Spec.PD != nil && tc.Spec.PD.InitWaitTime != 0 },
		Example: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD = pdOf(tc); tc.Spec.PD.InitWaitTime = 30 },
	},
	{
		Path: "spec.pd.mountClusterClientSecret",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return tc.Spec.PD != nil && tc.Spec.PD.MountClusterClientSecret != nil && *tc.Spec.PD.MountClusterClientSecret
		},
		Example: func(tc *v1alpha1.TidbCluster) { tc.Spec.PD = pdOf(tc); tc.Spec.PD.MountClusterClientSecret = ptr(true) },
	},
	{
		Path: "spec.tidb.tokenBasedAuthEnabled",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return tc.Spec.TiDB != nil && tc.Spec.TiDB.TokenBasedAuthEnabled != nil && *tc.Spec.TiDB.TokenBasedAuthEnabled
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = tidbOf(tc)
			tc.Spec.TiDB.TokenBasedAuthEnabled = ptr(true)
		},
	},
	{
		Path: "spec.tidb.customizedStartupProbe",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return tc.Spec.TiDB != nil && tc.Spec.TiDB.CustomizedStartupProbe != nil
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = tidbOf(tc)
			tc.Spec.TiDB.CustomizedStartupProbe = &v1alpha1.CustomizedProbe{Image: "probe:v1", BinaryName: "probe"}
		},
	},
	{
		Path: "spec.tidb.slowLogTailer.useSidecar",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return tc.Spec.TiDB != nil && tc.Spec.TiDB.SlowLogTailer != nil && tc.Spec.TiDB.SlowLogTailer.UseSidecar
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB = tidbOf(tc)
			tc.Spec.TiDB.SlowLogTailer = &v1alpha1.TiDBSlowLogTailerSpec{UseSidecar: true}
		},
	},
	{
		Path: "spec.discovery.livenessProbe",
		Set:  func(tc *v1alpha1.TidbCluster) bool { return tc.Spec.Discovery.LivenessProbe != nil },
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.Discovery.LivenessProbe = &v1alpha1.Probe{}
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

// tidbOf returns tc's TiDB spec, or a new one.
func tidbOf(tc *v1alpha1.TidbCluster) *v1alpha1.TiDBSpec {
	if tc.Spec.TiDB != nil {
		return tc.Spec.TiDB
	}
	return &v1alpha1.TiDBSpec{}
}
