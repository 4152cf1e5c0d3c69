package backup

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Names, paths and keys every backup and restore Job shares (the contract
// with cmd/backup-manager, docs/backup.md).
const (
	// DefaultServiceAccount runs a Job whose CR names none; users create it
	// with manifests/backup/backup-rbac.yaml.
	DefaultServiceAccount = "tidb-backup-manager"
	// BackupLabelKey and RestoreLabelKey name the CR a Job belongs to.
	BackupLabelKey  = "tidb.pingcap.com/backup"
	RestoreLabelKey = "tidb.pingcap.com/restore"
	// AnnRetryNum is the retry of a snapshot backup a Job runs (0: the first run).
	AnnRetryNum = "tidb.pingcap.com/backup-retry-num"
	// AnnTruncateUntil is the TSO a log-truncate Job truncates to.
	AnnTruncateUntil = "tidb.pingcap.com/log-truncate-until"
	// AnnCleanAttempt counts the clean Jobs of a deleted Backup (1: the first).
	AnnCleanAttempt = "tidb.pingcap.com/clean-attempt"

	backupManagerCommand = "/backup-manager"
	brBinVolume          = "br-bin"
	brBinDir             = "/var/lib/br-bin"
	gcsSecretVolume      = "gcs-credentials"
	gcsKeyDir            = "/var/lib/gcs-key"
	clusterTLSVolume     = "cluster-client-tls"
	clusterTLSDir        = "/var/lib/cluster-client-tls"
	clientTLSVolume      = "tidb-client-tls"
	clientTLSDir         = "/var/lib/tidb-client-tls"
)

// jobInput is everything a backup, clean or restore Job is built from; the
// CR-specific builders fill it from a Backup or a Restore.
type jobInput struct {
	owner     metav1.Object
	ownerKind string
	name      string            // the Job's name
	labels    map[string]string // the Job's and its pod's labels
	annots    map[string]string // the Job's annotations
	container string            // backup, restore or clean
	args      []string          // after the command /backup-manager
	image     string            // the backup-manager image
	brImage   string            // the init container copying BR; "" for none
	storage   v1alpha1.StorageProvider
	pod       podOptions
	tls       tlsMounts
}

// podOptions are the pod fields a Backup or Restore spec sets.
type podOptions struct {
	serviceAccount    string
	resources         corev1.ResourceRequirements
	env               []corev1.EnvVar
	useKMS            bool // spec.useKMS: AWS_DEFAULT_REGION (jobEnv)
	tolerations       []corev1.Toleration
	affinity          *corev1.Affinity
	securityContext   *corev1.PodSecurityContext
	priorityClassName string
	imagePullSecrets  []corev1.LocalObjectReference
	volumes           []corev1.Volume
	volumeMounts      []corev1.VolumeMount
	automountSAToken  *bool
}

// tlsMounts names the certificate Secrets a Job mounts; "" for none.
type tlsMounts struct {
	cluster string // <tc>-cluster-client-secret, for --cluster-tls
	client  string // the TiDB client certificate, for --client-tls
}

// newJob builds the Job of in: restartPolicy Never, backoffLimit 0, owned by
// in.owner, running /backup-manager with in.args in a container named
// in.container, with the storage credentials as env, the local volume, the
// TLS Secrets and, when in.brImage is set, the init container copying BR
// into the shared br-bin emptyDir. Pure.
func newJob(in jobInput) *batchv1.Job {
	volumes, mounts := jobVolumes(in)
	main := corev1.Container{
		Name:            in.container,
		Image:           in.image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{backupManagerCommand},
		Args:            in.args,
		Env:             append(jobEnv(in.storage, in.pod.useKMS), in.pod.env...),
		Resources:       in.pod.resources,
		VolumeMounts:    mounts,
	}
	spec := corev1.PodSpec{
		ServiceAccountName:           serviceAccountOr(in.pod.serviceAccount),
		AutomountServiceAccountToken: in.pod.automountSAToken,
		RestartPolicy:                corev1.RestartPolicyNever,
		Containers:                   []corev1.Container{main},
		Volumes:                      volumes,
		Tolerations:                  in.pod.tolerations,
		Affinity:                     in.pod.affinity,
		SecurityContext:              in.pod.securityContext,
		PriorityClassName:            in.pod.priorityClassName,
		ImagePullSecrets:             in.pod.imagePullSecrets,
	}
	if in.brImage != "" {
		spec.InitContainers = []corev1.Container{{
			Name:            "br",
			Image:           in.brImage,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/bin/sh", "-c", "cp /br " + brBinDir + "/br; echo 'BR copy finished'"},
			VolumeMounts:    []corev1.VolumeMount{{Name: brBinVolume, MountPath: brBinDir}},
			Resources:       in.pod.resources,
		}}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:        in.name,
			Namespace:   in.owner.GetNamespace(),
			Labels:      in.labels,
			Annotations: in.annots,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.SchemeGroupVersion.String(),
				Kind:               in.ownerKind,
				Name:               in.owner.GetName(),
				UID:                in.owner.GetUID(),
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: in.labels},
				Spec:       spec,
			},
		},
	}
}

// serviceAccountOr returns sa, or DefaultServiceAccount when it is empty.
func serviceAccountOr(sa string) string {
	if sa == "" {
		return DefaultServiceAccount
	}
	return sa
}

// jobLabels returns the labels of a Job of a backup or restore (spec §9):
// name and managed-by per kind, the component, the CR's name under its key,
// and the target cluster as instance when there is one.
func jobLabels(kind, component, crName, cluster string) map[string]string {
	l := label.Label{}
	if kind == "Restore" {
		l[label.NameLabelKey] = "restore"
		l[label.ManagedByLabelKey] = controller.RestoreJobManagedBy
		l[RestoreLabelKey] = crName
	} else {
		l[label.NameLabelKey] = "backup"
		l[label.ManagedByLabelKey] = controller.BackupJobManagedBy
		l[BackupLabelKey] = crName
	}
	l.Component(component)
	if cluster != "" {
		l.Instance(cluster)
	}
	return l.Labels()
}

// jobVolumes returns the pod's volumes and the main container's mounts: the
// br-bin emptyDir (with BR), the local storage volume, the GCS key, the TLS
// Secrets and the CR's additional volumes, in that order.
func jobVolumes(in jobInput) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(v corev1.Volume, m corev1.VolumeMount) {
		vols = append(vols, v)
		mounts = append(mounts, m)
	}
	if in.brImage != "" {
		add(corev1.Volume{Name: brBinVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			corev1.VolumeMount{Name: brBinVolume, MountPath: brBinDir})
	}
	if l := in.storage.Local; l != nil {
		add(l.Volume, l.VolumeMount)
	}
	if g := in.storage.Gcs; g != nil && g.SecretName != "" {
		add(secretVolume(gcsSecretVolume, g.SecretName), corev1.VolumeMount{Name: gcsSecretVolume, MountPath: gcsKeyDir, ReadOnly: true})
	}
	if in.tls.cluster != "" {
		add(secretVolume(clusterTLSVolume, in.tls.cluster), corev1.VolumeMount{Name: clusterTLSVolume, MountPath: clusterTLSDir, ReadOnly: true})
	}
	if in.tls.client != "" {
		add(secretVolume(clientTLSVolume, in.tls.client), corev1.VolumeMount{Name: clientTLSVolume, MountPath: clientTLSDir, ReadOnly: true})
	}
	vols = append(vols, in.pod.volumes...)
	mounts = append(mounts, in.pod.volumeMounts...)
	return vols, mounts
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
}

// clusterTLS returns the TLS Secrets a Job against tc mounts and the
// backup-manager flags that use them: --cluster-tls with the cluster's
// client certificate when tlsCluster is enabled, --client-tls with TiDB's
// client certificate (clientSecret, else <tc>-tidb-client-secret) when TiDB
// serves TLS to clients, followed by --skipClientCA=true (the TiDB Operator
// v1's argument) when spec.tidb.tlsClient.skipInternalClientCA. A nil tc
// has neither.
func clusterTLS(tc *v1alpha1.TidbCluster, clientSecret *string) (tlsMounts, []string) {
	var m tlsMounts
	var flags []string
	if tc == nil {
		return m, nil
	}
	if tc.Spec.TLSCluster != nil && tc.Spec.TLSCluster.Enabled {
		m.cluster = names.ClusterClientSecret(tc.Name)
		flags = append(flags, "--cluster-tls")
	}
	if tc.Spec.TiDB != nil && tc.Spec.TiDB.TLSClient != nil && tc.Spec.TiDB.TLSClient.Enabled {
		m.client = tc.Name + "-tidb-client-secret"
		if clientSecret != nil && *clientSecret != "" {
			m.client = *clientSecret
		}
		flags = append(flags, "--client-tls")
		if tc.Spec.TiDB.TLSClient.SkipInternalClientCA {
			flags = append(flags, "--skipClientCA=true")
		}
	}
	return m, flags
}

// tikvVersion returns the tag of the image TiKV of tc runs ("v8.5.0"), the
// version BR must match; "" when tc is nil or the image has no tag.
func tikvVersion(tc *v1alpha1.TidbCluster) string {
	if tc == nil {
		return ""
	}
	image := tikvImage(tc)
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[colon+1:]
	}
	return ""
}

// brImage returns the image of the BR init container: toolImage when set,
// else pingcap/br:<tikv version> (untagged when the version is unknown).
func brImage(toolImage, version string) string {
	switch {
	case toolImage != "":
		return toolImage
	case version == "":
		return "pingcap/br"
	default:
		return "pingcap/br:" + version
	}
}
