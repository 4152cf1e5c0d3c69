package tidbcluster

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// deniedFeatures names what tc asks that the operator cannot do without
// the cluster-wide permissions cfg says it lacks (a namespaced operator
// installed without the chart's controllerManager.clusterPermissions),
// each with the chart value that grants the permission. A nil cfg holds
// every permission. The names join the Unsupported condition, so a missing
// permission is a Warning once per generation, never silent.
func deniedFeatures(cfg *controller.CLIConfig, tc *v1alpha1.TidbCluster) []string {
	if cfg == nil {
		return nil
	}
	s := &tc.Spec
	var out []string
	needs := func(what, value string) { out = append(out, what+" (needs the chart value "+value+")") }
	if !cfg.ReadNodes {
		if s.TiKV != nil || s.TiFlash != nil || s.TiDB != nil {
			needs("store and TiDB topology labels from nodes", component.NodePermission)
		}
		if cfg.DetectNodeFailure {
			needs("node failure detection (--detect-node-failure)", component.NodePermission)
		}
	}
	if !cfg.ManagePersistentVolumes {
		needs("spec.pvReclaimPolicy and the meta labels of PVs", component.PersistentVolumePermission)
	}
	if !cfg.ReadStorageClasses {
		needs("PVC growth to a larger requests.storage", component.StorageClassPermission)
	}
	return out
}
