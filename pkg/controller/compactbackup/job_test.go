package compactbackup

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

const testImage = "pingcap/tidb-backup-manager:v1.6.0"

// cluster is TidbCluster ns/basic running TiKV v8.5.0.
func cluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "uid-tc"},
		Spec:       v1alpha1.TidbClusterSpec{Version: "v8.5.0", TiKV: &v1alpha1.TiKVSpec{}},
	}
}

// compact is a minimal valid CompactBackup ns/cb on S3.
func compact() *v1alpha1.CompactBackup {
	return &v1alpha1.CompactBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "cb", Namespace: "ns", UID: "uid-cb", Generation: 1},
		Spec: v1alpha1.CompactSpec{
			StartTs: "2026-01-01 00:00:00", EndTs: "2026-01-01 01:00:00", Concurrency: 4, MaxRetryTimes: 6,
			BR: &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
				Provider: "aws", Bucket: "backups", Prefix: "log", SecretName: "s3-secret", Region: "us-west-2"}},
		},
	}
}

// fullCompact sets every pod field and image override.
func fullCompact() *v1alpha1.CompactBackup {
	cb := compact()
	cb.Labels = map[string]string{"team": "db", "app.kubernetes.io/managed-by": "someone-else"}
	cb.Annotations = map[string]string{"note": "nightly"}
	s := &cb.Spec
	s.MaxRetryTimes = 2
	s.ToolImage = "registry.local/br"
	s.TiKVImage = "registry.local/tikv:v8.1.0"
	s.ServiceAccount = "compactor"
	s.AutomountServiceAccountToken = ptr.To(false)
	s.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resourceQuantity("2")}}
	s.Env = []corev1.EnvVar{{Name: "AWS_ACCESS_KEY_ID", Value: "override"}, {Name: "BR_LOG_TO_TERM", Value: "1"}}
	s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "backup"}}
	s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	s.PriorityClassName = "low"
	s.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
	s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	s.AdditionalVolumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	s.AdditionalVolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	return cb
}

// localCompact compacts a log backup on a local volume.
func localCompact() *v1alpha1.CompactBackup {
	cb := compact()
	cb.Spec.StorageProvider = v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{
		Prefix: "log",
		Volume: corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{
			NFS: &corev1.NFSVolumeSource{Server: "10.0.0.1", Path: "/backups"}}},
		VolumeMount: corev1.VolumeMount{Name: "nfs", MountPath: "/nfs"},
	}}
	return cb
}

// TestCompactJobGolden pins the Job of a minimal, a full and a local
// CompactBackup: name, labels (instance Compact-Backup, managed-by winning
// over the CR's), owner, backoffLimit = maxRetryTimes, OnFailure, the br
// and tikv-ctl init containers with their tag defaulting and overrides,
// the shared tool-bin mounts, args, env override order, the default
// service account and the projected token.
func TestCompactJobGolden(t *testing.T) {
	t.Parallel()
	golden.Assert(t, "minimal", newCompactJob(compact(), cluster(), testImage))
	golden.Assert(t, "full", newCompactJob(fullCompact(), cluster(), testImage))
	golden.Assert(t, "local", newCompactJob(localCompact(), cluster(), testImage))
}

func TestWithTag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ image, version, want string }{
		{"pingcap/br", "v8.5.0", "pingcap/br:v8.5.0"},
		{"pingcap/br:v7.5.0", "v8.5.0", "pingcap/br:v7.5.0"},
		{"registry:5000/br", "v8.5.0", "registry:5000/br:v8.5.0"},
		{"pingcap/br@sha256:abc", "v8.5.0", "pingcap/br@sha256:abc"},
		{"pingcap/br", "", "pingcap/br"},
	} {
		if got := withTag(c.image, c.version); got != c.want {
			t.Errorf("withTag(%q, %q) = %q, want %q", c.image, c.version, got, c.want)
		}
	}
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// TestCompactJobUseKMS: useKMS gives the Job v1.6's AWS_DEFAULT_REGION
// (the S3 region); without it there is none.
func TestCompactJobUseKMS(t *testing.T) {
	t.Parallel()
	region := func(cb *v1alpha1.CompactBackup) (string, bool) {
		for _, e := range newCompactJob(cb, cluster(), testImage).Spec.Template.Spec.Containers[0].Env {
			if e.Name == "AWS_DEFAULT_REGION" {
				return e.Value, true
			}
		}
		return "", false
	}
	cb := compact()
	if _, ok := region(cb); ok {
		t.Error("AWS_DEFAULT_REGION without useKMS")
	}
	cb.Spec.UseKMS = true
	if got, _ := region(cb); got != "us-west-2" {
		t.Errorf("AWS_DEFAULT_REGION = %q, want us-west-2", got)
	}
}
