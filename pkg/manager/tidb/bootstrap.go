package tidb

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
)

// Bootstrap SQL (spec.tidb.bootstrapSQLConfigMapName): the ConfigMap's key
// BootstrapSQLKey is mounted read-only into the tidb container as
// bootstrapSQLFile, and TiDB's config points initialize-sql-file at it.
// TiDB runs that file once, when it bootstraps a new cluster.
const (
	// BootstrapSQLKey is the key of the bootstrap SQL in the user's ConfigMap.
	BootstrapSQLKey = "bootstrap-sql"
	// InitializeSQLFileKey is TiDB's config key naming the file run on bootstrap.
	InitializeSQLFileKey = "initialize-sql-file"

	bootstrapSQLVolume = "tidb-bootstrap-sql"
	bootstrapSQLDir    = "/etc/tidb-bootstrap"
	bootstrapSQLFile   = bootstrapSQLDir + "/bootstrap.sql"
)

// bootstrapSQLConfigMap returns the ConfigMap named by
// spec.tidb.bootstrapSQLConfigMapName, or "" when none is set.
func bootstrapSQLConfigMap(tc *v1alpha1.TidbCluster) string {
	if name := tc.Spec.TiDB.BootstrapSQLConfigMapName; name != nil {
		return *name
	}
	return ""
}

// bootstrapSQLVolumes mounts the bootstrap SQL into main and returns its pod
// volume; nothing without bootstrapSQLConfigMapName.
func bootstrapSQLVolumes(tc *v1alpha1.TidbCluster, main *corev1.Container) []corev1.Volume {
	name := bootstrapSQLConfigMap(tc)
	if name == "" {
		return nil
	}
	main.VolumeMounts = append(main.VolumeMounts,
		corev1.VolumeMount{Name: bootstrapSQLVolume, MountPath: bootstrapSQLDir, ReadOnly: true})
	return []corev1.Volume{{Name: bootstrapSQLVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name},
			Items:                []corev1.KeyToPath{{Key: BootstrapSQLKey, Path: "bootstrap.sql"}},
		},
	}}}
}

// ReadLive records the bootstrap SQL ConfigMap live's pods mount — the
// ConfigMap volume projecting BootstrapSQLKey, ours or the TiDB Operator's
// — for the rule that it may not change once set (validation.ValidateLive).
func (c *Component) ReadLive(live *appsv1.StatefulSet, rec *validation.Live) {
	for _, v := range live.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for _, item := range v.ConfigMap.Items {
			if item.Key == BootstrapSQLKey {
				rec.BootstrapSQL = v.ConfigMap.Name
				return
			}
		}
	}
}
