package unsupported

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// DMCluster lists the DMCluster fields nothing acts on.
var DMCluster = []Field[v1alpha1.DMCluster]{
	{Path: "spec.discovery.address", Why: "deprecated: the TiDB Operator v1.6 does not read it either",
		Set:     func(dc *v1alpha1.DMCluster) bool { return dc.Spec.Discovery.Address != "" },
		Example: func(dc *v1alpha1.DMCluster) { dc.Spec.Discovery.Address = "http://discovery:10261" }},
	{Path: "spec.enablePVReclaim", Why: "the PVCs of scaled-in DM members are kept, marked for deferred deletion, and deleted by the next scale-out (v1.6 skips them too)",
		Set:     func(dc *v1alpha1.DMCluster) bool { return dc.Spec.EnablePVReclaim != nil && *dc.Spec.EnablePVReclaim },
		Example: func(dc *v1alpha1.DMCluster) { dc.Spec.EnablePVReclaim = ptr(true) }},
	{Path: "spec.preferIPv6", Why: "dm-master and dm-worker listen on 0.0.0.0",
		Set:     func(dc *v1alpha1.DMCluster) bool { return dc.Spec.PreferIPv6 },
		Example: func(dc *v1alpha1.DMCluster) { dc.Spec.PreferIPv6 = true }},
	{Path: "spec.worker.dataSubDir", Why: "dm-worker is given no data directory (as in v1.6): the data volume is mounted whole",
		Set:     func(dc *v1alpha1.DMCluster) bool { return dc.Spec.Worker != nil && dc.Spec.Worker.DataSubDir != "" },
		Example: func(dc *v1alpha1.DMCluster) { dc.Spec.Worker = &v1alpha1.WorkerSpec{Replicas: 1, DataSubDir: "data"} }},
}
