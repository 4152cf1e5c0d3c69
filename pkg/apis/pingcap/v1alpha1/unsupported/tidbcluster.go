package unsupported

import (
	"slices"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TidbCluster lists the TidbCluster fields nothing acts on yet.
var TidbCluster = []Field[v1alpha1.TidbCluster]{
	{
		Path:    "spec.pdms",
		Why:     "PD runs as one service unless spec.pd.mode is ms, as in the TiDB Operator",
		Partial: true,
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return len(tc.Spec.PDMS) > 0 && (tc.Spec.PD == nil || tc.Spec.PD.Mode != "ms")
		},
		Example: func(tc *v1alpha1.TidbCluster) { tc.Spec.PDMS = []*v1alpha1.PDMSSpec{{Name: "tso"}} },
	},
	{
		Path:    "spec.pd.mode",
		Why:     "PD runs as one service without spec.pdms, as in the TiDB Operator",
		Partial: true,
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return tc.Spec.PD != nil && tc.Spec.PD.Mode == "ms" && tc.Spec.PDMS == nil
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD = pdOf(tc)
			tc.Spec.PD.Mode = "ms"
		},
	},
	{
		Path: "spec.pdms.maxFailoverCount",
		Why:  "PD micro-services have no failover, as in the TiDB Operator",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return slices.ContainsFunc(msEntries(tc), func(ms *v1alpha1.PDMSSpec) bool { return ms != nil && ms.MaxFailoverCount != nil })
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			withMS(tc, []*v1alpha1.PDMSSpec{{Name: "tso", MaxFailoverCount: ptr(int32(1))}})
		},
	},
	{
		Path: "spec.pdms.tlsClientSecretName",
		Why:  "the services use PD's certificate, as in the TiDB Operator",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return slices.ContainsFunc(msEntries(tc), func(ms *v1alpha1.PDMSSpec) bool { return ms != nil && ms.TLSClientSecretName != nil })
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			withMS(tc, []*v1alpha1.PDMSSpec{{Name: "tso", TLSClientSecretName: ptr("s")}})
		},
	},
	{
		Path: "spec.pdms.startUpScriptVersion",
		Why:  "the services always run the v2 start script, as in the TiDB Operator",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return slices.ContainsFunc(msEntries(tc), func(ms *v1alpha1.PDMSSpec) bool { return ms != nil && ms.StartUpScriptVersion != "" })
		},
		Example: func(tc *v1alpha1.TidbCluster) {
			withMS(tc, []*v1alpha1.PDMSSpec{{Name: "tso", StartUpScriptVersion: "v1"}})
		},
	},
	{
		Path: "spec.pdms.startTimeout",
		Why:  "the start script waits spec.pd.startTimeout, as in the TiDB Operator",
		Set: func(tc *v1alpha1.TidbCluster) bool {
			return slices.ContainsFunc(msEntries(tc), func(ms *v1alpha1.PDMSSpec) bool { return ms != nil && ms.StartTimeout > 0 && ms.StartTimeout != 30 })
		},
		Example: func(tc *v1alpha1.TidbCluster) { withMS(tc, []*v1alpha1.PDMSSpec{{Name: "tso", StartTimeout: 5}}) },
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

// msEntries are the spec.pdms entries when PD runs its micro-services
// (spec.pd.mode "ms"); nil otherwise, when the spec.pdms entry names them all.
func msEntries(tc *v1alpha1.TidbCluster) []*v1alpha1.PDMSSpec {
	if tc.Spec.PD == nil || tc.Spec.PD.Mode != "ms" {
		return nil
	}
	return tc.Spec.PDMS
}

// withMS sets spec.pd.mode "ms" and the spec.pdms entries ms.
func withMS(tc *v1alpha1.TidbCluster, ms []*v1alpha1.PDMSSpec) {
	tc.Spec.PD = pdOf(tc)
	tc.Spec.PD.Mode = "ms"
	tc.Spec.PDMS = ms
}
