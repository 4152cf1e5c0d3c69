package backup

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Log backup subcommands (the backup-manager's --subcommand).
const (
	logStart    = "log-start"
	logStop     = "log-stop"
	logTruncate = "log-truncate"
	logPause    = "log-pause"
	logResume   = "log-resume"
)

// Job names (the contract with cmd/backup-manager).

// BackupJobName is the Job of a snapshot backup or a dumpling export: backup-<name>.
func BackupJobName(backup string) string { return "backup-" + backup }

// LogJobName is the Job of a log backup subcommand, named as v1.6 names
// it: backup-<name>-log-start, -log-stop, -log-truncate, -log-pause or
// -log-resume.
func LogJobName(backup, subcommand string) string {
	return "backup-" + backup + "-" + subcommand
}

// CleanJobName is the Job that deletes a deleted Backup's data: clean-<name>.
func CleanJobName(backup string) string { return "clean-" + backup }

// RestoreJobName is the Job of a restore: restore-<name>.
func RestoreJobName(restore string) string { return "restore-" + restore }

// backupPodOptions are the pod fields of spec.
func backupPodOptions(s *v1alpha1.BackupSpec) podOptions {
	return podOptions{
		serviceAccount: s.ServiceAccount, resources: s.ResourceRequirements, env: s.Env,
		tolerations: s.Tolerations, affinity: s.Affinity, securityContext: s.PodSecurityContext,
		priorityClassName: s.PriorityClassName, imagePullSecrets: s.ImagePullSecrets,
		volumes: s.AdditionalVolumes, volumeMounts: s.AdditionalVolumeMounts,
		automountSAToken: s.AutomountServiceAccountToken, useKMS: s.UseKMS,
	}
}

// backupCluster returns the name of the cluster spec.br backs up, "" without BR.
func backupCluster(b *v1alpha1.Backup) string {
	if b.Spec.BR == nil {
		return ""
	}
	return b.Spec.BR.Cluster
}

// backupJobInput is what every Job of b shares; tc is the cluster spec.br
// names (nil for a dumpling export).
func backupJobInput(b *v1alpha1.Backup, image, name, component string) jobInput {
	return jobInput{
		owner: b, ownerKind: "Backup", name: name, image: image, container: component,
		labels:  jobLabels("Backup", component, b.Name, backupCluster(b)),
		storage: b.Spec.StorageProvider, pod: backupPodOptions(&b.Spec),
	}
}

// newBackupJob builds backup-<name>: with spec.br, `backup` with the TiKV
// version of tc and its TLS flags and the BR init container; without it,
// `export` (dumpling) with TiDB's client certificate from
// spec.from.tlsClientSecretName and --client-tls, which has dumpling use it. The
// Job is annotated with retryNum, the retry it runs. Pure.
func newBackupJob(b *v1alpha1.Backup, tc *v1alpha1.TidbCluster, image string, retryNum int) *batchv1.Job {
	in := backupJobInput(b, image, BackupJobName(b.Name), "backup")
	in.annots = map[string]string{AnnRetryNum: strconv.Itoa(retryNum)}
	common := []string{"--namespace=" + b.Namespace, "--backupName=" + b.Name}
	if b.Spec.BR == nil {
		in.args = append([]string{"export"}, common...)
		if f := b.Spec.From; f != nil && f.TLSClientSecretName != nil && *f.TLSClientSecretName != "" {
			in.tls.client = *f.TLSClientSecretName
			in.args = append(in.args, "--client-tls")
		}
		return newJob(in)
	}
	version := tikvVersion(tc)
	var flags []string
	in.tls, flags = clusterTLS(tc, nil)
	in.args = append(append([]string{"backup"}, common...), "--tikvVersion="+version)
	in.args = append(in.args, flags...)
	in.brImage = brImage(b.Spec.ToolImage, version)
	return newJob(in)
}

// newLogJob builds backup-<name>-log-<start|stop|truncate|pause|resume>, the BR Job running
// one log backup subcommand; a truncate Job is annotated with the TSO it
// truncates to. Pure.
func newLogJob(b *v1alpha1.Backup, tc *v1alpha1.TidbCluster, image, subcommand string) *batchv1.Job {
	in := backupJobInput(b, image, LogJobName(b.Name, subcommand), "backup")
	version := tikvVersion(tc)
	var flags []string
	in.tls, flags = clusterTLS(tc, nil)
	in.args = []string{"backup", "--namespace=" + b.Namespace, "--backupName=" + b.Name,
		"--tikvVersion=" + version, "--mode=log", "--subcommand=" + subcommand}
	in.args = append(in.args, flags...)
	in.brImage = brImage(b.Spec.ToolImage, version)
	if subcommand == logTruncate {
		in.annots = map[string]string{AnnTruncateUntil: b.Spec.LogTruncateUntil}
	}
	return newJob(in)
}

// newCleanJob builds clean-<name>, which deletes the data of a deleted
// Backup (`clean`); attempt counts the clean Jobs of this Backup. Pure.
func newCleanJob(b *v1alpha1.Backup, image string, attempt int) *batchv1.Job {
	in := backupJobInput(b, image, CleanJobName(b.Name), "clean")
	in.annots = map[string]string{AnnCleanAttempt: strconv.Itoa(attempt)}
	in.args = []string{"clean", "--namespace=" + b.Namespace, "--backupName=" + b.Name}
	return newJob(in)
}

// restorePodOptions are the pod fields of spec.
func restorePodOptions(s *v1alpha1.RestoreSpec) podOptions {
	return podOptions{
		serviceAccount: s.ServiceAccount, resources: s.ResourceRequirements, env: s.Env,
		tolerations: s.Tolerations, affinity: s.Affinity, securityContext: s.PodSecurityContext,
		priorityClassName: s.PriorityClassName, imagePullSecrets: s.ImagePullSecrets,
		volumes: s.AdditionalVolumes, volumeMounts: s.AdditionalVolumeMounts,
		automountSAToken: s.AutomountServiceAccountToken, useKMS: s.UseKMS,
	}
}

// newRestoreJob builds restore-<name>: with spec.br, `restore` with the
// TiKV version of tc, its TLS flags, --mode=pitr for a PiTR restore, and the
// BR init container; without it, `import` (lightning) with TiDB's client
// certificate from spec.to.tlsClientSecretName and --client-tls, which has
// Lightning use it. spec.backoffLimit, when set, is the Job's. Pure.
func newRestoreJob(r *v1alpha1.Restore, tc *v1alpha1.TidbCluster, image string) *batchv1.Job {
	job := buildRestoreJob(r, tc, image)
	if r.Spec.BackoffLimit > 0 {
		job.Spec.BackoffLimit = ptr.To(r.Spec.BackoffLimit)
	}
	return job
}

func buildRestoreJob(r *v1alpha1.Restore, tc *v1alpha1.TidbCluster, image string) *batchv1.Job {
	cluster := ""
	if r.Spec.BR != nil {
		cluster = r.Spec.BR.Cluster
	}
	in := jobInput{
		owner: r, ownerKind: "Restore", name: RestoreJobName(r.Name), image: image, container: "restore",
		labels:  jobLabels("Restore", "restore", r.Name, cluster),
		storage: r.Spec.StorageProvider, pod: restorePodOptions(&r.Spec),
	}
	common := []string{"--namespace=" + r.Namespace, "--restoreName=" + r.Name}
	if r.Spec.BR == nil {
		in.args = append([]string{"import"}, common...)
		if t := r.Spec.To; t != nil && t.TLSClientSecretName != nil && *t.TLSClientSecretName != "" {
			in.tls.client = *t.TLSClientSecretName
			in.args = append(in.args, "--client-tls")
		}
		return newJob(in)
	}
	version := tikvVersion(tc)
	var flags []string
	in.tls, flags = clusterTLS(tc, nil)
	in.args = append(append([]string{"restore"}, common...), "--tikvVersion="+version)
	if r.Spec.Mode == v1alpha1.RestoreModePiTR {
		in.args = append(in.args, "--mode=pitr")
	}
	in.args = append(in.args, flags...)
	in.brImage = brImage(r.Spec.ToolImage, version)
	return newJob(in)
}
