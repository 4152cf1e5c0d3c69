package backup

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

const testImage = "pingcap/tidb-backup-manager:test"

// envNames returns the names of the main container's env, and the Secret
// key each reads ("" for a plain or downward-API value).
func envOf(j *batchv1.Job) map[string]string {
	out := map[string]string{}
	for _, e := range j.Spec.Template.Spec.Containers[0].Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			out[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			out[e.Name] = "field:" + e.ValueFrom.FieldRef.FieldPath
		default:
			out[e.Name] = e.Value
		}
	}
	return out
}

func mountsOf(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		out[m.Name] = m.MountPath
	}
	return out
}

func TestBackupJobPerProvider(t *testing.T) {
	t.Parallel()
	downward := map[string]string{"NAMESPACE": "field:metadata.namespace", "POD_NAME": "field:metadata.name"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range downward {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	local := &v1alpha1.LocalStorageProvider{
		Volume:      corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/b"}}},
		VolumeMount: corev1.VolumeMount{Name: "nfs", MountPath: "/nfs"},
		Prefix:      "backups",
	}
	cases := []struct {
		name       string
		sp         v1alpha1.StorageProvider
		wantEnv    map[string]string
		wantMounts map[string]string
		useKMS     bool
	}{
		{"s3 with useKMS: v1.6's AWS_DEFAULT_REGION", v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b",
			Region: "us-west-2", SecretName: "s3-secret"}},
			with(map[string]string{"AWS_DEFAULT_REGION": "us-west-2", "AWS_ACCESS_KEY_ID": "s3-secret/access_key",
				"AWS_SECRET_ACCESS_KEY": "s3-secret/secret_key"}),
			map[string]string{"br-bin": "/var/lib/br-bin"}, true},
		{"gcs bucket and object fields: v1.6's env", v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{ProjectId: "p", Bucket: "b",
			ObjectAcl: "private", BucketAcl: "projectPrivate", Location: "us-east1", StorageClass: "NEARLINE"}},
			with(map[string]string{"GCS_PROJECT_ID": "p", "GCS_OBJECT_ACL": "private", "GCS_BUCKET_ACL": "projectPrivate",
				"GCS_LOCATION": "us-east1", "GCS_STORAGE_CLASS": "NEARLINE"}),
			map[string]string{"br-bin": "/var/lib/br-bin"}, false},
		{"s3", v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b", SecretName: "s3-secret"}},
			with(map[string]string{"AWS_ACCESS_KEY_ID": "s3-secret/access_key", "AWS_SECRET_ACCESS_KEY": "s3-secret/secret_key"}),
			map[string]string{"br-bin": "/var/lib/br-bin"}, false},
		{"s3 with IAM", v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b", Region: "us-west-2"}},
			with(nil), map[string]string{"br-bin": "/var/lib/br-bin"}, false},
		{"gcs", v1alpha1.StorageProvider{Gcs: &v1alpha1.GcsStorageProvider{ProjectId: "p", Bucket: "b", SecretName: "gcs-secret"}},
			with(map[string]string{"GCS_PROJECT_ID": "p", "GOOGLE_APPLICATION_CREDENTIALS": "/var/lib/gcs-key/credentials"}),
			map[string]string{"br-bin": "/var/lib/br-bin", "gcs-credentials": "/var/lib/gcs-key"}, false},
		{"azure", v1alpha1.StorageProvider{Azblob: &v1alpha1.AzblobStorageProvider{Container: "c", SecretName: "az-secret"}},
			with(map[string]string{"AZURE_STORAGE_ACCOUNT": "az-secret/AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY": "az-secret/AZURE_STORAGE_KEY",
				"AZURE_CLIENT_ID": "az-secret/AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET": "az-secret/AZURE_CLIENT_SECRET",
				"AZURE_TENANT_ID": "az-secret/AZURE_TENANT_ID", "AZURE_STORAGE_SAS_TOKEN": "az-secret/AZURE_STORAGE_SAS_TOKEN"}),
			map[string]string{"br-bin": "/var/lib/br-bin"}, false},
		{"local", v1alpha1.StorageProvider{Local: local}, with(nil),
			map[string]string{"br-bin": "/var/lib/br-bin", "nfs": "/nfs"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := validBackup()
			b.Spec.StorageProvider = tc.sp
			b.Spec.UseKMS = tc.useKMS
			j := newBackupJob(defaulted(b), cluster(), testImage, 0)
			expectBackupJobFrame(t, j)
			if diff := cmp.Diff(tc.wantEnv, envOf(j)); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMounts, mountsOf(j.Spec.Template.Spec.Containers[0])); diff != "" {
				t.Errorf("mounts (-want +got):\n%s", diff)
			}
			if len(j.Spec.Template.Spec.Volumes) != len(tc.wantMounts) {
				t.Errorf("volumes %v, want one per mount", j.Spec.Template.Spec.Volumes)
			}
		})
	}
}

// expectBackupJobFrame checks what every snapshot backup Job of
// validBackup has, whatever its storage.
func expectBackupJobFrame(t *testing.T, j *batchv1.Job) {
	t.Helper()
	if j.Name != "backup-bk" || j.Namespace != "ns" {
		t.Errorf("name %s/%s", j.Namespace, j.Name)
	}
	wantLabels := map[string]string{
		"app.kubernetes.io/name": "backup", "app.kubernetes.io/managed-by": "backup-operator",
		"app.kubernetes.io/component": "backup", "tidb.pingcap.com/backup": "bk", "app.kubernetes.io/instance": "basic",
	}
	if diff := cmp.Diff(wantLabels, j.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	ref := metav1.GetControllerOf(j)
	if ref == nil || ref.Kind != "Backup" || ref.Name != "bk" || ref.UID != "uid-1" || ref.APIVersion != "pingcap.com/v1alpha1" {
		t.Errorf("controller ref %+v", ref)
	}
	if ptr.Deref(j.Spec.BackoffLimit, -1) != 0 {
		t.Errorf("backoffLimit %v, want 0", j.Spec.BackoffLimit)
	}
	pod := j.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.ServiceAccountName != "tidb-backup-manager" {
		t.Errorf("restartPolicy %s, serviceAccount %s", pod.RestartPolicy, pod.ServiceAccountName)
	}
	main := pod.Containers[0]
	wantArgs := []string{"backup", "--namespace=ns", "--backupName=bk", "--tikvVersion=v8.5.0"}
	if main.Name != "backup" || main.Image != testImage || !slices.Equal(main.Command, []string{"/backup-manager"}) ||
		!slices.Equal(main.Args, wantArgs) {
		t.Errorf("container %s %s %v %v, want backup %s /backup-manager %v", main.Name, main.Image, main.Command, main.Args, testImage, wantArgs)
	}
	if len(pod.InitContainers) != 1 {
		t.Fatalf("init containers %v, want br", pod.InitContainers)
	}
	br := pod.InitContainers[0]
	if br.Name != "br" || br.Image != "pingcap/br:v8.5.0" || mountsOf(br)["br-bin"] != "/var/lib/br-bin" ||
		!slices.Equal(br.Command, []string{"/bin/sh", "-c", "cp /br /var/lib/br-bin/br; echo 'BR copy finished'"}) {
		t.Errorf("br init container %+v", br)
	}
}

func TestBackupJobCarriesPodFieldsAndTLS(t *testing.T) {
	t.Parallel()
	b := validBackup()
	s := &b.Spec
	s.ServiceAccount = "sa"
	s.ToolImage = "my/br:v8"
	s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
	s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	s.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}
	s.PriorityClassName = "high"
	s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	s.Env = []corev1.EnvVar{{Name: "EXTRA", Value: "1"}}
	s.AutomountServiceAccountToken = ptr.To(false)
	s.ResourceRequirements = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: *resourceQuantity("1")}}
	tc := cluster()
	tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
	tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: true}}
	j := newBackupJob(defaulted(b), tc, testImage, 2)
	pod := j.Spec.Template.Spec
	main := pod.Containers[0]
	if pod.ServiceAccountName != "sa" || pod.PriorityClassName != "high" || len(pod.Tolerations) != 1 || pod.Affinity == nil ||
		pod.SecurityContext == nil || len(pod.ImagePullSecrets) != 1 || pod.InitContainers[0].Image != "my/br:v8" ||
		ptr.Deref(pod.AutomountServiceAccountToken, true) {
		t.Errorf("pod fields not carried: %+v", pod)
	}
	if envOf(j)["EXTRA"] != "1" || main.Resources.Limits.Cpu().String() != "1" {
		t.Errorf("env %v resources %v", envOf(j), main.Resources)
	}
	if !slices.Contains(main.Args, "--cluster-tls") || !slices.Contains(main.Args, "--client-tls") {
		t.Errorf("args %v, want both TLS flags", main.Args)
	}
	m := mountsOf(main)
	if m["cluster-client-tls"] != "/var/lib/cluster-client-tls" || m["tidb-client-tls"] != "/var/lib/tidb-client-tls" {
		t.Errorf("mounts %v", m)
	}
	if j.Annotations[AnnRetryNum] != "2" {
		t.Errorf("annotations %v, want retry 2", j.Annotations)
	}
}

func TestOtherJobs(t *testing.T) {
	t.Parallel()
	export := validBackup()
	export.Spec.BR = nil
	export.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "pw"}
	logb := validBackup()
	logb.Spec.BackupMode = v1alpha1.BackupModeLog
	logb.Spec.LogTruncateUntil = "4000"
	pitr := &v1alpha1.Restore{
		ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns", UID: "uid-r"},
		Spec: v1alpha1.RestoreSpec{Mode: v1alpha1.RestoreModePiTR, BR: &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "b"}}},
	}
	cases := []struct {
		name, job, container string
		j                    *batchv1.Job
		args                 []string
		br                   bool
		component            string
	}{
		{"export", "backup-bk", "backup", newBackupJob(defaulted(export), nil, testImage, 0),
			[]string{"export", "--namespace=ns", "--backupName=bk"}, false, "backup"},
		{"log start", "backup-bk-log-start", "backup", newLogJob(defaulted(logb), cluster(), testImage, logStart),
			[]string{"backup", "--namespace=ns", "--backupName=bk", "--tikvVersion=v8.5.0", "--mode=log", "--subcommand=log-start"}, true, "backup"},
		{"log truncate", "backup-bk-log-truncate", "backup", newLogJob(defaulted(logb), cluster(), testImage, logTruncate),
			[]string{"backup", "--namespace=ns", "--backupName=bk", "--tikvVersion=v8.5.0", "--mode=log", "--subcommand=log-truncate"}, true, "backup"},
		{"log stop", "backup-bk-log-stop", "backup", newLogJob(defaulted(logb), cluster(), testImage, logStop),
			[]string{"backup", "--namespace=ns", "--backupName=bk", "--tikvVersion=v8.5.0", "--mode=log", "--subcommand=log-stop"}, true, "backup"},
		{"clean", "clean-bk", "clean", newCleanJob(defaulted(validBackup()), testImage, 1),
			[]string{"clean", "--namespace=ns", "--backupName=bk"}, false, "clean"},
		{"pitr restore", "restore-rt", "restore", newRestoreJob(pitr, cluster(), testImage),
			[]string{"restore", "--namespace=ns", "--restoreName=rt", "--tikvVersion=v8.5.0", "--mode=pitr"}, true, "restore"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			main := tc.j.Spec.Template.Spec.Containers[0]
			if tc.j.Name != tc.job || main.Name != tc.container || !slices.Equal(main.Args, tc.args) {
				t.Errorf("Job %s container %s args %v, want %s %s %v", tc.j.Name, main.Name, main.Args, tc.job, tc.container, tc.args)
			}
			if got := len(tc.j.Spec.Template.Spec.InitContainers) == 1; got != tc.br {
				t.Errorf("br init container %v, want %v", got, tc.br)
			}
			if tc.j.Labels["app.kubernetes.io/component"] != tc.component {
				t.Errorf("labels %v", tc.j.Labels)
			}
		})
	}
	if j := newLogJob(defaulted(logb), cluster(), testImage, logTruncate); j.Annotations[AnnTruncateUntil] != "4000" {
		t.Errorf("truncate Job annotations %v", j.Annotations)
	}
	pitr.Spec.BackoffLimit = 3
	r := newRestoreJob(pitr, cluster(), testImage)
	if ptr.Deref(r.Spec.BackoffLimit, 0) != 3 {
		t.Errorf("restore Job backoffLimit %v, want spec.backoffLimit 3", r.Spec.BackoffLimit)
	}
	if r.Labels["app.kubernetes.io/managed-by"] != "restore-operator" || r.Labels["tidb.pingcap.com/restore"] != "rt" ||
		r.Labels["app.kubernetes.io/name"] != "restore" || metav1.GetControllerOf(r).Kind != "Restore" {
		t.Errorf("restore Job labels %v owner %+v", r.Labels, metav1.GetControllerOf(r))
	}
}

// TestSkipClientCAFlag: BR's backup, log and restore Jobs against a cluster
// with tlsClient.skipInternalClientCA pass --skipClientCA=true right after
// --client-tls (the TiDB Operator v1's arguments); without TLS clients, or
// without the field, they do not; an export, which names no cluster, never.
func TestSkipClientCAFlag(t *testing.T) {
	t.Parallel()
	withTLS := func(enabled, skip bool) *v1alpha1.TidbCluster {
		tc := cluster()
		tc.Spec.TiDB = &v1alpha1.TiDBSpec{TLSClient: &v1alpha1.TiDBTLSClient{Enabled: enabled, SkipInternalClientCA: skip}}
		return tc
	}
	logb := validBackup()
	logb.Spec.BackupMode = v1alpha1.BackupModeLog
	restore := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns"},
		Spec: v1alpha1.RestoreSpec{BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
	jobs := map[string]func(*v1alpha1.TidbCluster) *batchv1.Job{
		"backup": func(tc *v1alpha1.TidbCluster) *batchv1.Job {
			return newBackupJob(defaulted(validBackup()), tc, testImage, 0)
		},
		"log": func(tc *v1alpha1.TidbCluster) *batchv1.Job {
			return newLogJob(defaulted(logb), tc, testImage, logStart)
		},
		"restore": func(tc *v1alpha1.TidbCluster) *batchv1.Job { return newRestoreJob(restore, tc, testImage) },
	}
	for name, build := range jobs {
		args := build(withTLS(true, true)).Spec.Template.Spec.Containers[0].Args
		if i := slices.Index(args, "--client-tls"); i < 0 || i+1 >= len(args) || args[i+1] != "--skipClientCA=true" {
			t.Errorf("%s with skipInternalClientCA: args %v, want --client-tls --skipClientCA=true", name, args)
		}
		for _, tc := range []*v1alpha1.TidbCluster{withTLS(true, false), withTLS(false, true)} {
			if args := build(tc).Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--skipClientCA=true") {
				t.Errorf("%s with tlsClient %+v: args %v", name, *tc.Spec.TiDB.TLSClient, args)
			}
		}
	}
	export := validBackup()
	export.Spec.BR = nil
	export.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "pw", TLSClientSecretName: ptr.To("client")}
	if args := newBackupJob(defaulted(export), nil, testImage, 0).Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--skipClientCA=true") {
		t.Errorf("export args %v", args)
	}
}

// TestExportImportClientTLS: an export with spec.from.tlsClientSecretName and
// an import with spec.to's mount that Secret and pass --client-tls, so that
// dumpling and Lightning use it; without it, neither.
func TestExportImportClientTLS(t *testing.T) {
	t.Parallel()
	export := validBackup()
	export.Spec.BR = nil
	export.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "pw", TLSClientSecretName: ptr.To("client")}
	imp := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "ns"},
		Spec: v1alpha1.RestoreSpec{To: &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "pw", TLSClientSecretName: ptr.To("client")}}}
	for name, j := range map[string]*batchv1.Job{
		"export": newBackupJob(defaulted(export), nil, testImage, 0),
		"import": newRestoreJob(imp, nil, testImage),
	} {
		main := j.Spec.Template.Spec.Containers[0]
		if !slices.Contains(main.Args, "--client-tls") || mountsOf(main)["tidb-client-tls"] != "/var/lib/tidb-client-tls" {
			t.Errorf("%s: args %v mounts %v, want --client-tls with the Secret at /var/lib/tidb-client-tls", name, main.Args, mountsOf(main))
		}
	}
	export.Spec.From.TLSClientSecretName = nil
	if args := newBackupJob(defaulted(export), nil, testImage, 0).Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--client-tls") {
		t.Errorf("export without tlsClientSecretName: args %v", args)
	}
}

func resourceQuantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// TestRestoreJobUseKMS: a Restore's useKMS gives its Job v1.6's
// AWS_DEFAULT_REGION (the S3 region); without it there is none.
func TestRestoreJobUseKMS(t *testing.T) {
	t.Parallel()
	r := validRestore(v1alpha1.RestoreModeSnapshot)
	r.Spec.S3.Region = "eu-west-1"
	if _, ok := envOf(newRestoreJob(r, cluster(), testImage))["AWS_DEFAULT_REGION"]; ok {
		t.Errorf("AWS_DEFAULT_REGION without useKMS")
	}
	r.Spec.UseKMS = true
	if got := envOf(newRestoreJob(r, cluster(), testImage))["AWS_DEFAULT_REGION"]; got != "eu-west-1" {
		t.Errorf("AWS_DEFAULT_REGION = %q, want eu-west-1", got)
	}
}
