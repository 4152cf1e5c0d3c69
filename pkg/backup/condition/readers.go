package condition

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// IsBackupScheduled reports whether the backup's Job was created.
func IsBackupScheduled(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupScheduled) }

// IsBackupRunning reports whether the backup-manager started the backup.
func IsBackupRunning(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupRunning) }

// IsBackupComplete reports whether the backup finished successfully.
func IsBackupComplete(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupComplete) }

// IsBackupFailed reports whether the backup failed.
func IsBackupFailed(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupFailed) }

// IsBackupRetryFailed reports whether creating the backup's Job failed.
func IsBackupRetryFailed(b *v1alpha1.Backup) bool {
	return IsBackupTrue(b, v1alpha1.BackupRetryFailed)
}

// IsBackupInvalid reports whether the backup's spec was found invalid.
func IsBackupInvalid(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupInvalid) }

// IsBackupPrepare reports whether a log backup is being prepared.
func IsBackupPrepare(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupPrepare) }

// IsBackupClean reports whether the backup's remote data was cleaned.
func IsBackupClean(b *v1alpha1.Backup) bool { return IsBackupTrue(b, v1alpha1.BackupClean) }

// IsBackupCleanFailed reports whether cleaning the backup's remote data failed.
func IsBackupCleanFailed(b *v1alpha1.Backup) bool {
	return IsBackupTrue(b, v1alpha1.BackupCleanFailed)
}

// IsBackupFinished reports whether the backup reached Complete or Failed.
func IsBackupFinished(b *v1alpha1.Backup) bool { return IsBackupComplete(b) || IsBackupFailed(b) }

// IsRestoreScheduled reports whether the restore's Job was created.
func IsRestoreScheduled(r *v1alpha1.Restore) bool {
	return IsRestoreTrue(r, v1alpha1.RestoreScheduled)
}

// IsRestoreRunning reports whether the backup-manager started the restore.
func IsRestoreRunning(r *v1alpha1.Restore) bool { return IsRestoreTrue(r, v1alpha1.RestoreRunning) }

// IsRestoreComplete reports whether the restore finished successfully.
func IsRestoreComplete(r *v1alpha1.Restore) bool {
	return IsRestoreTrue(r, v1alpha1.RestoreComplete)
}

// IsRestoreFailed reports whether the restore failed.
func IsRestoreFailed(r *v1alpha1.Restore) bool { return IsRestoreTrue(r, v1alpha1.RestoreFailed) }

// IsRestoreRetryFailed reports whether creating the restore's Job failed.
func IsRestoreRetryFailed(r *v1alpha1.Restore) bool {
	return IsRestoreTrue(r, v1alpha1.RestoreRetryFailed)
}

// IsRestoreInvalid reports whether the restore's spec was found invalid.
func IsRestoreInvalid(r *v1alpha1.Restore) bool { return IsRestoreTrue(r, v1alpha1.RestoreInvalid) }

// IsRestoreFinished reports whether the restore reached Complete or Failed.
func IsRestoreFinished(r *v1alpha1.Restore) bool {
	return IsRestoreComplete(r) || IsRestoreFailed(r)
}

// BackupPaused is the condition type and phase of a log backup whose task
// `br log pause` paused (v1.6's Paused phase).
const BackupPaused v1alpha1.BackupConditionType = "Paused"

// IsBackupPaused reports whether the log backup is paused.
func IsBackupPaused(b *v1alpha1.Backup) bool { return IsBackupTrue(b, BackupPaused) }
