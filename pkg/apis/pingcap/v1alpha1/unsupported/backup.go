package unsupported

import (
	"slices"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Why of the volume-snapshot (EBS) fields: such backups and restores are
// refused.
const volumeSnapshot = "volume-snapshot backups and restores are not run by this operator version"

// Why of useKMS with a TiDB login: the Job gets v1.6's AWS_DEFAULT_REGION,
// but the backup-manager reads the password Secret as it is.
const kmsPassword = "the TiDB password of spec.from/spec.to is not KMS-decrypted (the Job gets AWS_DEFAULT_REGION as v1.6's)"

// Backup lists the Backup fields nothing acts on yet.
var Backup = slices.Concat(
	backupSpecFields("spec", func(b *v1alpha1.Backup) *v1alpha1.BackupSpec { return &b.Spec }),
	storageFields("spec", func(b *v1alpha1.Backup) *v1alpha1.StorageProvider { return &b.Spec.StorageProvider }),
)

// Restore lists the Restore fields nothing acts on yet.
var Restore = slices.Concat(
	storageFields("spec", func(r *v1alpha1.Restore) *v1alpha1.StorageProvider { return &r.Spec.StorageProvider }),
	storageFields("spec.pitrFullBackupStorageProvider", func(r *v1alpha1.Restore) *v1alpha1.StorageProvider {
		return &r.Spec.PitrFullBackupStorageProvider
	}),
	pitrGCSFields("spec.pitrFullBackupStorageProvider", func(r *v1alpha1.Restore) *v1alpha1.StorageProvider {
		return &r.Spec.PitrFullBackupStorageProvider
	}),
	[]Field[v1alpha1.Restore]{
		restoreField("spec.backoffRetryPolicy", "a failed restore is not retried (v1.6's Restore has no backoffRetryPolicy either)",
			func(s *v1alpha1.RestoreSpec) bool { return s.BackoffRetryPolicy != (v1alpha1.BackoffRetryPolicy{}) },
			func(s *v1alpha1.RestoreSpec) { s.BackoffRetryPolicy.MaxRetryTimes = 3 }),
		restoreField("spec.useKMS", kmsPassword, func(s *v1alpha1.RestoreSpec) bool { return s.UseKMS && s.To != nil },
			func(s *v1alpha1.RestoreSpec) {
				s.UseKMS = true
				s.To = &v1alpha1.TiDBAccessConfig{Host: "tidb", SecretName: "s"}
			}),
		restoreField("spec.federalVolumeRestorePhase", volumeSnapshot,
			func(s *v1alpha1.RestoreSpec) bool { return s.FederalVolumeRestorePhase != "" },
			func(s *v1alpha1.RestoreSpec) { s.FederalVolumeRestorePhase = "restore-volume" }),
		restoreField("spec.volumeAZ", volumeSnapshot, func(s *v1alpha1.RestoreSpec) bool { return s.VolumeAZ != "" },
			func(s *v1alpha1.RestoreSpec) { s.VolumeAZ = "us-west-2a" }),
		restoreField("spec.prune", volumeSnapshot, func(s *v1alpha1.RestoreSpec) bool { return s.Prune != "" },
			func(s *v1alpha1.RestoreSpec) { s.Prune = "afterFailed" }),
		restoreField("spec.warmup", volumeSnapshot, func(s *v1alpha1.RestoreSpec) bool { return s.Warmup != "" },
			func(s *v1alpha1.RestoreSpec) { s.Warmup = "sync" }),
		restoreField("spec.warmupImage", volumeSnapshot, func(s *v1alpha1.RestoreSpec) bool { return s.WarmupImage != "" },
			func(s *v1alpha1.RestoreSpec) { s.WarmupImage = "warmup:v1" }),
		restoreField("spec.warmupStrategy", volumeSnapshot, func(s *v1alpha1.RestoreSpec) bool { return s.WarmupStrategy != "" },
			func(s *v1alpha1.RestoreSpec) { s.WarmupStrategy = "fio" }),
		restoreField("spec.tolerateSingleTiKVOutage", volumeSnapshot,
			func(s *v1alpha1.RestoreSpec) bool { return s.TolerateSingleTiKVOutage },
			func(s *v1alpha1.RestoreSpec) { s.TolerateSingleTiKVOutage = true }),
	},
)

// BackupSchedule lists the BackupSchedule fields nothing acts on yet.
var BackupSchedule = slices.Concat(
	storageFields("spec", func(bs *v1alpha1.BackupSchedule) *v1alpha1.StorageProvider { return &bs.Spec.StorageProvider }),
	backupSpecFields("spec.backupTemplate", func(bs *v1alpha1.BackupSchedule) *v1alpha1.BackupSpec {
		return &bs.Spec.BackupTemplate
	}),
	storageFields("spec.backupTemplate", func(bs *v1alpha1.BackupSchedule) *v1alpha1.StorageProvider {
		return &bs.Spec.BackupTemplate.StorageProvider
	}),
	backupSpecFields("spec.logBackupTemplate", logTemplate),
	storageFields("spec.logBackupTemplate", func(bs *v1alpha1.BackupSchedule) *v1alpha1.StorageProvider {
		return &logTemplate(bs).StorageProvider
	}),
)

// logTemplate returns bs's log backup template, creating it.
func logTemplate(bs *v1alpha1.BackupSchedule) *v1alpha1.BackupSpec {
	if bs.Spec.LogBackupTemplate == nil {
		bs.Spec.LogBackupTemplate = &v1alpha1.BackupSpec{}
	}
	return bs.Spec.LogBackupTemplate
}

// backupSpecFields are the fields of the BackupSpec get finds in an
// object, at prefix; get may create it (Example) and is called on a copy
// of the object for Set.
func backupSpecFields[T any](prefix string, get func(*T) *v1alpha1.BackupSpec) []Field[T] {
	f := func(path, why string, set func(*v1alpha1.BackupSpec) bool, example func(*v1alpha1.BackupSpec)) Field[T] {
		return Field[T]{Path: prefix + "." + path, Why: why,
			Set:     func(obj *T) bool { return set(get(shallow(obj))) },
			Example: func(obj *T) { example(get(obj)) }}
	}
	return []Field[T]{
		f("useKMS", kmsPassword, func(s *v1alpha1.BackupSpec) bool { return s.UseKMS && s.From != nil },
			func(s *v1alpha1.BackupSpec) {
				s.UseKMS = true
				s.From = &v1alpha1.TiDBAccessConfig{Host: "tidb", SecretName: "s"}
			}),
		f("cleanOption.snapshotsDeleteRatio", volumeSnapshot,
			func(s *v1alpha1.BackupSpec) bool {
				return s.CleanOption != nil && s.CleanOption.SnapshotsDeleteRatio != 0
			},
			func(s *v1alpha1.BackupSpec) { s.CleanOption = &v1alpha1.CleanOption{SnapshotsDeleteRatio: 2} }),
		f("calcSizeLevel", volumeSnapshot, func(s *v1alpha1.BackupSpec) bool { return s.CalcSizeLevel != "" },
			func(s *v1alpha1.BackupSpec) { s.CalcSizeLevel = "none" }),
		f("federalVolumeBackupPhase", volumeSnapshot, func(s *v1alpha1.BackupSpec) bool { return s.FederalVolumeBackupPhase != "" },
			func(s *v1alpha1.BackupSpec) { s.FederalVolumeBackupPhase = "initialize" }),
		f("resumeGcSchedule", volumeSnapshot, func(s *v1alpha1.BackupSpec) bool { return s.ResumeGcSchedule },
			func(s *v1alpha1.BackupSpec) { s.ResumeGcSchedule = true }),
		f("volumeBackupInitJobMaxActiveSeconds", volumeSnapshot,
			func(s *v1alpha1.BackupSpec) bool { return s.VolumeBackupInitJobMaxActiveSeconds != 0 },
			func(s *v1alpha1.BackupSpec) { s.VolumeBackupInitJobMaxActiveSeconds = 60 }),
	}
}

// storageFields are the storage fields of the StorageProvider get finds
// in an object, at prefix.
func storageFields[T any](prefix string, get func(*T) *v1alpha1.StorageProvider) []Field[T] {
	return []Field[T]{
		{
			Path: prefix + ".s3.options", Why: "rclone options: the backup Jobs run no rclone",
			Set: func(obj *T) bool { p := get(shallow(obj)); return p.S3 != nil && len(p.S3.Options) > 0 },
			Example: func(obj *T) {
				get(obj).S3 = &v1alpha1.S3StorageProvider{Bucket: "b", Options: []string{"--s3-acl=private"}}
			},
		},
	}
}

// Why of the GCS bucket fields of a Restore's PiTR full-backup storage.
const pitrGCSBucket = "the Job's GCS_BUCKET_ACL and GCS_LOCATION are its spec.gcs's, as v1.6's"

// pitrGCSFields are the GCS bucket fields of a Restore's
// pitrFullBackupStorageProvider, which no Job env carries (v1.6 passes
// those of spec.gcs only).
func pitrGCSFields(prefix string, get func(*v1alpha1.Restore) *v1alpha1.StorageProvider) []Field[v1alpha1.Restore] {
	return []Field[v1alpha1.Restore]{
		{
			Path: prefix + ".gcs.bucketAcl", Why: pitrGCSBucket,
			Set:     func(r *v1alpha1.Restore) bool { p := get(r); return p.Gcs != nil && p.Gcs.BucketAcl != "" },
			Example: func(r *v1alpha1.Restore) { get(r).Gcs = &v1alpha1.GcsStorageProvider{BucketAcl: "private"} },
		},
		{
			Path: prefix + ".gcs.location", Why: pitrGCSBucket,
			Set:     func(r *v1alpha1.Restore) bool { p := get(r); return p.Gcs != nil && p.Gcs.Location != "" },
			Example: func(r *v1alpha1.Restore) { get(r).Gcs = &v1alpha1.GcsStorageProvider{Location: "us"} },
		},
	}
}

// restoreField is one RestoreSpec field at path.
func restoreField(path, why string, set func(*v1alpha1.RestoreSpec) bool, example func(*v1alpha1.RestoreSpec)) Field[v1alpha1.Restore] {
	return Field[v1alpha1.Restore]{Path: path, Why: why,
		Set:     func(r *v1alpha1.Restore) bool { return set(&r.Spec) },
		Example: func(r *v1alpha1.Restore) { example(&r.Spec) }}
}

// shallow returns a shallow copy of obj, so a getter that creates a missing
// parent (logTemplate) never changes the object Set reads.
func shallow[T any](obj *T) *T {
	c := *obj
	return &c
}
