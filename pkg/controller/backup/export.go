package backup

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// StorageEnv returns the env every backup-manager container gets for sp:
// NAMESPACE and POD_NAME from the downward API, then the storage
// credentials from their Secrets (none for IAM and local storage), and
// with useKMS an S3 provider's AWS_DEFAULT_REGION. Pure; the CompactBackup
// Job shares it.
func StorageEnv(sp v1alpha1.StorageProvider, useKMS bool) []corev1.EnvVar { return jobEnv(sp, useKMS) }

// StorageVolumes returns the volumes of sp a Job's pod needs and their
// mounts: the local storage volume and the GCS key Secret (mounted where
// GOOGLE_APPLICATION_CREDENTIALS of StorageEnv points). Pure.
func StorageVolumes(sp v1alpha1.StorageProvider) ([]corev1.Volume, []corev1.VolumeMount) {
	return jobVolumes(jobInput{storage: sp})
}

// TiKVImage returns the image TiKV of tc runs, as the cluster's defaults
// resolve it ("pingcap/tikv:v8.5.0").
func TiKVImage(tc *v1alpha1.TidbCluster) string { return tikvImage(tc) }

// TiKVVersion returns the tag of TiKV's image in tc ("v8.5.0"); "" when tc
// is nil or the image has no tag.
func TiKVVersion(tc *v1alpha1.TidbCluster) string { return tikvVersion(tc) }
