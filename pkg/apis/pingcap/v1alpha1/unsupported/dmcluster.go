package unsupported

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// DMCluster lists the DMCluster fields nothing acts on.
var DMCluster = []Field[v1alpha1.DMCluster]{
	{Path: "spec.discovery.address", Why: "deprecated: the TiDB Operator v1.6 does not read it either",
		Set:     func(dc *v1alpha1.DMCluster) bool { return dc.Spec.Discovery.Address != "" },
		Example: func(dc *v1alpha1.DMCluster) { dc.Spec.Discovery.Address = "http://discovery:10261" }},
}
