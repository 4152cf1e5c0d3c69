package compactbackup

import (
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// The Job's contract with `backup-manager compact` (docs/backup.md): where
// the init containers copy the tools, and the instance label v1.6 gives
// every compaction Job.
const (
	// InstanceLabel is the app.kubernetes.io/instance of every compaction Job (v1.6's literal).
	InstanceLabel = "Compact-Backup"
	// BRDir and TiKVCtlDir are where the init containers copy br and tikv-ctl.
	BRDir      = "/var/lib/br-bin"
	TiKVCtlDir = "/var/lib/kvctl-bin"

	toolVolume      = "tool-bin"
	tokenVolume     = "kube-api-access"
	tokenDir        = "/var/run/secrets/kubernetes.io/serviceaccount" //nolint:gosec // G101: a mount path, not a credential
	tokenExpiration = int64(3607)
)

// newCompactJob builds the Job <name> of cb: init containers copying br
// (spec.toolImage, else pingcap/br) and tikv-ctl (spec.tikvImage, else
// tc's TiKV image) into the shared tool-bin emptyDir, tag-less images
// getting TiKV's version; then the backup-manager running `compact
// --namespace=<ns> --resourceName=<name>` with the storage credentials as
// env, overridden by spec.env. restartPolicy OnFailure and backoffLimit
// spec.maxRetryTimes retry a failed run in place. Pure.
func newCompactJob(cb *v1alpha1.CompactBackup, tc *v1alpha1.TidbCluster, image string) *batchv1.Job {
	s := &cb.Spec
	version := backup.TiKVVersion(tc)
	mounts := []corev1.VolumeMount{{Name: toolVolume, MountPath: BRDir}, {Name: toolVolume, MountPath: TiKVCtlDir}}
	volumes := []corev1.Volume{{Name: toolVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	storageVols, storageMounts := backup.StorageVolumes(s.StorageProvider)
	volumes = append(append(volumes, storageVols...), s.AdditionalVolumes...)
	mounts = append(append(mounts, storageMounts...), s.AdditionalVolumeMounts...)
	tikvImage := s.TiKVImage
	if tikvImage == "" {
		tikvImage = backup.TiKVImage(tc)
	}
	brImage := s.ToolImage
	if brImage == "" {
		brImage = "pingcap/br"
	}
	initContainer := func(name, image, tool, dir, done string) corev1.Container {
		return corev1.Container{
			Name: name, Image: withTag(image, version), ImagePullPolicy: corev1.PullIfNotPresent,
			Command:      []string{"/bin/sh", "-c", "cp /" + tool + " " + dir + "/" + tool + "; echo '" + done + "'"},
			VolumeMounts: slices.Clone(mounts), Resources: s.Resources,
		}
	}
	main := corev1.Container{
		Name: "backup-manager", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:      []string{"/backup-manager"},
		Args:         []string{"compact", "--namespace=" + cb.Namespace, "--resourceName=" + cb.Name},
		Env:          overrideEnv(backup.StorageEnv(s.StorageProvider, s.UseKMS), s.Env),
		VolumeMounts: slices.Clone(mounts), Resources: s.Resources,
	}
	pod := corev1.PodSpec{
		ServiceAccountName:           serviceAccountOr(s.ServiceAccount),
		AutomountServiceAccountToken: s.AutomountServiceAccountToken,
		RestartPolicy:                corev1.RestartPolicyOnFailure,
		InitContainers: []corev1.Container{
			initContainer("br", brImage, "br", BRDir, "BR copy finished"),
			initContainer("tikv-ctl", tikvImage, "tikv-ctl", TiKVCtlDir, "tikv-ctl copy finished"),
		},
		Containers:        []corev1.Container{main},
		Volumes:           volumes,
		Tolerations:       s.Tolerations,
		ImagePullSecrets:  s.ImagePullSecrets,
		Affinity:          s.Affinity,
		SecurityContext:   s.PodSecurityContext,
		PriorityClassName: s.PriorityClassName,
	}
	if s.AutomountServiceAccountToken != nil && !*s.AutomountServiceAccountToken {
		projectToken(&pod)
	}
	labels := jobLabels(cb)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: cb.Name, Namespace: cb.Namespace, Labels: labels, Annotations: cb.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: Kind, Name: cb.Name, UID: cb.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(s.MaxRetryTimes),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: cb.Annotations},
				Spec:       pod,
			},
		},
	}
}

// jobLabels are cb's labels with v1.6's compaction Job labels over them
// (the managed-by label must win: the operator caches only its own Jobs).
func jobLabels(cb *v1alpha1.CompactBackup) map[string]string {
	l := map[string]string{}
	for k, v := range cb.Labels {
		l[k] = v
	}
	l[label.NameLabelKey] = "backup"
	l[label.ManagedByLabelKey] = controller.BackupJobManagedBy
	l[label.InstanceLabelKey] = InstanceLabel
	l[label.ComponentLabelKey] = "backup"
	l[backup.BackupLabelKey] = cb.Name
	return l
}

// withTag returns image with version as its tag when it has none (and no
// digest), else image itself; version "" leaves it tag-less.
func withTag(image, version string) string {
	if version == "" || strings.Contains(image, "@") {
		return image
	}
	if colon := strings.LastIndex(image, ":"); colon > strings.LastIndex(image, "/") {
		return image
	}
	return image + ":" + version
}

// overrideEnv returns base with each var of override replacing the one of
// the same name, or appended when base has none.
func overrideEnv(base, override []corev1.EnvVar) []corev1.EnvVar {
	out := append([]corev1.EnvVar(nil), base...)
	for _, e := range override {
		replaced := false
		for i := range out {
			if out[i].Name == e.Name {
				out[i], replaced = e, true
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}

// serviceAccountOr returns sa, or the default backup service account.
func serviceAccountOr(sa string) string {
	if sa == "" {
		return backup.DefaultServiceAccount
	}
	return sa
}

// projectToken mounts the service account's credentials into the
// backup-manager container when the pod opts out of the automatic mount:
// it reads and writes its CompactBackup through the API server.
func projectToken(pod *corev1.PodSpec) {
	expiration := tokenExpiration
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: tokenVolume, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiration}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		}},
	}})
	c := &pod.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tokenVolume, MountPath: tokenDir, ReadOnly: true})
}
