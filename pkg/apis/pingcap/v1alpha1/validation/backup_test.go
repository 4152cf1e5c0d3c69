package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

func s3() *v1alpha1.S3StorageProvider {
	return &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "backups"}
}

// brBackup is a valid BR snapshot backup to S3.
func brBackup() *v1alpha1.Backup {
	return &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{
		StorageProvider: v1alpha1.StorageProvider{S3: s3()},
		BR:              &v1alpha1.BRConfig{Cluster: "basic"},
	}}
}

func checkErrs(t *testing.T, got field.ErrorList, want []fieldErr) {
	t.Helper()
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("errors mismatch (-want +got):\n%s\nall: %v", diff, got)
	}
}

func TestValidateBackup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(b *v1alpha1.Backup)
		want   []fieldErr
	}{
		{name: "BR to S3", mutate: func(*v1alpha1.Backup) {}},
		{name: "S3 by deprecated path", mutate: func(b *v1alpha1.Backup) { b.Spec.S3 = &v1alpha1.S3StorageProvider{Provider: "ceph", Path: "s3://b/p"} }},
		{name: "BR to GCS", mutate: func(b *v1alpha1.Backup) { b.Spec.S3, b.Spec.Gcs = nil, &v1alpha1.GcsStorageProvider{ProjectId: "p"} }},
		{name: "BR to Azure", mutate: func(b *v1alpha1.Backup) {
			b.Spec.S3, b.Spec.Azblob = nil, &v1alpha1.AzblobStorageProvider{Container: "c"}
		}},
		{name: "BR to a volume", mutate: func(b *v1alpha1.Backup) { b.Spec.S3, b.Spec.Local = nil, &v1alpha1.LocalStorageProvider{} }},
		{name: "BR log backup", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BackupMode, b.Spec.LogSubcommand = v1alpha1.BackupModeLog, "log-start"
		}},
		{name: "BR table backup", mutate: func(b *v1alpha1.Backup) { b.Spec.BackupType, b.Spec.BR.DB, b.Spec.BR.Table = "table", "db", "t" }},
		{name: "dumpling backup", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BR, b.Spec.From = nil, &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "pw"}
		}},
		{name: "no storage provider", mutate: func(b *v1alpha1.Backup) { b.Spec.S3 = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec"}}},
		{name: "two storage providers", mutate: func(b *v1alpha1.Backup) { b.Spec.Gcs = &v1alpha1.GcsStorageProvider{ProjectId: "p"} },
			want: []fieldErr{{field.ErrorTypeForbidden, "spec.gcs"}}},
		{name: "dumpling with two storage providers", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BR, b.Spec.From = nil, &v1alpha1.TiDBAccessConfig{Host: "h", SecretName: "s"}
			b.Spec.Local = &v1alpha1.LocalStorageProvider{}
		}, want: []fieldErr{{field.ErrorTypeForbidden, "spec.local"}}},
		{name: "S3 without provider, bucket or path", mutate: func(b *v1alpha1.Backup) { b.Spec.S3 = &v1alpha1.S3StorageProvider{} },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.s3.provider"}, {field.ErrorTypeRequired, "spec.s3.bucket"}}},
		{name: "GCS without project", mutate: func(b *v1alpha1.Backup) { b.Spec.S3, b.Spec.Gcs = nil, &v1alpha1.GcsStorageProvider{Bucket: "b"} },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.gcs.projectId"}}},
		{name: "BR without cluster", mutate: func(b *v1alpha1.Backup) { b.Spec.BR.Cluster = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.br.cluster"}}},
		{name: "dumpling without from", mutate: func(b *v1alpha1.Backup) { b.Spec.BR = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.from"}}},
		{name: "dumpling with incomplete from", mutate: func(b *v1alpha1.Backup) { b.Spec.BR, b.Spec.From = nil, &v1alpha1.TiDBAccessConfig{} },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.from.host"}, {field.ErrorTypeRequired, "spec.from.secretName"}}},
		{name: "log backup without BR", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BR, b.Spec.BackupMode = nil, v1alpha1.BackupModeLog
			b.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "h", SecretName: "s"}
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.br"}}},
		{name: "volume-snapshot backup without BR", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BR, b.Spec.BackupMode = nil, v1alpha1.BackupModeVolumeSnapshot
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.br"}, {field.ErrorTypeRequired, "spec.from"}}},
		{name: "unknown type, mode and clean policy", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BackupType, b.Spec.BackupMode, b.Spec.CleanPolicy = "incremental", "stream", "Keep"
		}, want: []fieldErr{
			{field.ErrorTypeNotSupported, "spec.backupType"}, {field.ErrorTypeNotSupported, "spec.backupMode"},
			{field.ErrorTypeNotSupported, "spec.cleanPolicy"},
		}},
		{name: "db backup without database", mutate: func(b *v1alpha1.Backup) { b.Spec.BackupType = v1alpha1.BackupTypeDB },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.br.db"}}},
		{name: "table backup without table", mutate: func(b *v1alpha1.Backup) { b.Spec.BackupType, b.Spec.BR.DB = v1alpha1.BackupTypeTable, "db" },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.br.table"}}},
		{name: "log subcommand on a snapshot backup", mutate: func(b *v1alpha1.Backup) { b.Spec.LogSubcommand = "log-stop" },
			want: []fieldErr{{field.ErrorTypeForbidden, "spec.logSubcommand"}}},
		{name: "unknown log subcommand", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BackupMode, b.Spec.LogSubcommand = v1alpha1.BackupModeLog, "log-resume"
		},
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.logSubcommand"}}},
		{name: "bad retry policy", mutate: func(b *v1alpha1.Backup) {
			b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "5 min", MaxRetryTimes: -1, RetryTimeout: "-1h"}
		}, want: []fieldErr{
			{field.ErrorTypeInvalid, "spec.backoffRetryPolicy.minRetryDuration"},
			{field.ErrorTypeInvalid, "spec.backoffRetryPolicy.retryTimeout"},
			{field.ErrorTypeInvalid, "spec.backoffRetryPolicy.maxRetryTimes"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := brBackup()
			c.mutate(b)
			defaulting.SetBackupDefaults(b)
			checkErrs(t, ValidateBackup(b), c.want)
		})
	}
	if errs := ValidateBackup(nil); errs != nil {
		t.Errorf("ValidateBackup(nil) = %v, want none", errs)
	}
}

func TestValidateRestore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(r *v1alpha1.Restore)
		want   []fieldErr
	}{
		{name: "BR snapshot restore", mutate: func(*v1alpha1.Restore) {}},
		{name: "BR PiTR restore", mutate: func(r *v1alpha1.Restore) {
			r.Spec.Mode = v1alpha1.RestoreModePiTR
			r.Spec.PitrFullBackupStorageProvider = v1alpha1.StorageProvider{S3: s3()}
		}},
		{name: "lightning restore", mutate: func(r *v1alpha1.Restore) {
			r.Spec.BR, r.Spec.To = nil, &v1alpha1.TiDBAccessConfig{Host: "h", SecretName: "s"}
		}},
		{name: "unknown mode", mutate: func(r *v1alpha1.Restore) { r.Spec.Mode = "incremental" },
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.restoreMode"}}},
		{name: "unknown backup type", mutate: func(r *v1alpha1.Restore) { r.Spec.BackupType = "everything" },
			want: []fieldErr{{field.ErrorTypeNotSupported, "spec.backupType"}}},
		{name: "BR without storage", mutate: func(r *v1alpha1.Restore) { r.Spec.S3 = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec"}}},
		{name: "two full-backup providers", mutate: func(r *v1alpha1.Restore) {
			r.Spec.PitrFullBackupStorageProvider = v1alpha1.StorageProvider{S3: s3(), Gcs: &v1alpha1.GcsStorageProvider{ProjectId: "p"}}
		}, want: []fieldErr{{field.ErrorTypeForbidden, "spec.pitrFullBackupStorageProvider.gcs"}}},
		{name: "BR without cluster", mutate: func(r *v1alpha1.Restore) { r.Spec.BR.Cluster = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.br.cluster"}}},
		{name: "PiTR without BR", mutate: func(r *v1alpha1.Restore) {
			r.Spec.BR, r.Spec.Mode = nil, v1alpha1.RestoreModePiTR
			r.Spec.To = &v1alpha1.TiDBAccessConfig{Host: "h", SecretName: "s"}
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.br"}}},
		{name: "lightning without target", mutate: func(r *v1alpha1.Restore) { r.Spec.BR = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.to"}}},
		{name: "bad retry timeout", mutate: func(r *v1alpha1.Restore) { r.Spec.BackoffRetryPolicy.RetryTimeout = "soon" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.backoffRetryPolicy.retryTimeout"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &v1alpha1.Restore{Spec: v1alpha1.RestoreSpec{
				StorageProvider: v1alpha1.StorageProvider{S3: s3()},
				BR:              &v1alpha1.BRConfig{Cluster: "basic"},
			}}
			c.mutate(r)
			defaulting.SetRestoreDefaults(r)
			checkErrs(t, ValidateRestore(r), c.want)
		})
	}
	if errs := ValidateRestore(nil); errs != nil {
		t.Errorf("ValidateRestore(nil) = %v, want none", errs)
	}
}

func TestValidateBackupSchedule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(bs *v1alpha1.BackupSchedule)
		want   []fieldErr
	}{
		{name: "valid", mutate: func(*v1alpha1.BackupSchedule) {}},
		{name: "retention", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.MaxReservedTime, bs.Spec.MaxBackups, bs.Spec.CompactInterval = ptr("72h"), ptr[int32](5), ptr("1h")
		}},
		{name: "template inherits schedule storage and BR", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.S3, bs.Spec.BackupTemplate.BR = nil, nil
			bs.Spec.S3, bs.Spec.BR = s3(), &v1alpha1.BRConfig{Cluster: "basic"}
		}},
		{name: "log template", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.LogBackupTemplate = &v1alpha1.BackupSpec{StorageProvider: v1alpha1.StorageProvider{S3: s3()}, BR: &v1alpha1.BRConfig{Cluster: "basic"}}
		}},
		{name: "empty schedule", mutate: func(bs *v1alpha1.BackupSchedule) { bs.Spec.Schedule = "" },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.schedule"}}},
		{name: "bad schedule", mutate: func(bs *v1alpha1.BackupSchedule) { bs.Spec.Schedule = "every night" },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.schedule"}}},
		{name: "bad retention", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.MaxReservedTime, bs.Spec.MaxBackups, bs.Spec.CompactInterval = ptr("3 days"), ptr[int32](0), ptr("0s")
		}, want: []fieldErr{
			{field.ErrorTypeInvalid, "spec.maxReservedTime"}, {field.ErrorTypeInvalid, "spec.compactInterval"},
			{field.ErrorTypeInvalid, "spec.maxBackups"},
		}},
		{name: "zero reserved time", mutate: func(bs *v1alpha1.BackupSchedule) { bs.Spec.MaxReservedTime = ptr("0s") },
			want: []fieldErr{{field.ErrorTypeInvalid, "spec.maxReservedTime"}}},
		{name: "template without storage", mutate: func(bs *v1alpha1.BackupSchedule) { bs.Spec.BackupTemplate.S3 = nil },
			want: []fieldErr{{field.ErrorTypeRequired, "spec.backupTemplate"}}},
		{name: "template with two providers", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.BackupTemplate.Azblob = &v1alpha1.AzblobStorageProvider{}
		}, want: []fieldErr{{field.ErrorTypeForbidden, "spec.backupTemplate.azblob"}}},
		{name: "schedule with two providers", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.S3, bs.Spec.Gcs = s3(), &v1alpha1.GcsStorageProvider{ProjectId: "p"}
		}, want: []fieldErr{{field.ErrorTypeForbidden, "spec.gcs"}}},
		{name: "log template without BR cluster", mutate: func(bs *v1alpha1.BackupSchedule) {
			bs.Spec.LogBackupTemplate = &v1alpha1.BackupSpec{StorageProvider: v1alpha1.StorageProvider{S3: s3()}, BR: &v1alpha1.BRConfig{}}
		}, want: []fieldErr{{field.ErrorTypeRequired, "spec.logBackupTemplate.br.cluster"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bs := &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{
				Schedule:       "0 2 * * *",
				BackupTemplate: brBackup().Spec,
			}}
			c.mutate(bs)
			defaulting.SetBackupScheduleDefaults(bs)
			checkErrs(t, ValidateBackupSchedule(bs), c.want)
		})
	}
	if errs := ValidateBackupSchedule(nil); errs != nil {
		t.Errorf("ValidateBackupSchedule(nil) = %v, want none", errs)
	}
}

func TestValidateBackupLocalProviderKeepsVolume(t *testing.T) {
	t.Parallel()
	// inheritSchedule must not share the schedule's provider with the copy it validates.
	bs := &v1alpha1.BackupSchedule{Spec: v1alpha1.BackupScheduleSpec{
		Schedule:        "@daily",
		StorageProvider: v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{Volume: corev1.Volume{Name: "nfs"}}},
		BR:              &v1alpha1.BRConfig{Cluster: "basic"},
	}}
	before := bs.DeepCopy()
	checkErrs(t, ValidateBackupSchedule(bs), nil)
	if diff := cmp.Diff(before, bs); diff != "" {
		t.Errorf("ValidateBackupSchedule() changed its input (-before +after):\n%s", diff)
	}
}
