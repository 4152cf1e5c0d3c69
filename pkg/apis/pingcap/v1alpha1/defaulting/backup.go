package defaulting

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Defaults of backups (spec §9).
const (
	defaultMinRetryDuration = "300s"
	defaultMaxRetryTimes    = 2
	defaultRetryTimeout     = "30m"
)

// SetBackupDefaults sets, in place, backupMode snapshot, backupType full and
// cleanPolicy Retain when empty, and for snapshot backups the retry policy
// {minRetryDuration 300s, maxRetryTimes 2, retryTimeout 30m} field by field.
// A maxRetryTimes of 0 cannot be told from unset and becomes 2. Call it on a
// deep copy you own; it never errors and is a no-op for a nil b.
func SetBackupDefaults(b *v1alpha1.Backup) {
	if b == nil {
		return
	}
	setBackupSpecDefaults(&b.Spec)
}

// SetRestoreDefaults sets restoreMode snapshot when empty. Call it on a deep
// copy you own; it never errors and is a no-op for a nil r.
func SetRestoreDefaults(r *v1alpha1.Restore) {
	if r == nil {
		return
	}
	if r.Spec.Mode == "" {
		r.Spec.Mode = v1alpha1.RestoreModeSnapshot
	}
}

// SetBackupScheduleDefaults applies the Backup defaults to
// spec.backupTemplate and to spec.logBackupTemplate, whose backupMode
// defaults to log because the schedule only ever runs it as a log backup.
//
// The schedule controller must build the Backups it creates from the
// undefaulted template, because a defaulted copy would persist today's
// defaults into every created Backup. No-op for a nil bs.
func SetBackupScheduleDefaults(bs *v1alpha1.BackupSchedule) {
	if bs == nil {
		return
	}
	setBackupSpecDefaults(&bs.Spec.BackupTemplate)
	if t := bs.Spec.LogBackupTemplate; t != nil {
		if t.BackupMode == "" {
			t.BackupMode = v1alpha1.BackupModeLog
		}
		setBackupSpecDefaults(t)
	}
}

func setBackupSpecDefaults(s *v1alpha1.BackupSpec) {
	if s.BackupMode == "" {
		s.BackupMode = v1alpha1.BackupModeSnapshot
	}
	if s.BackupType == "" {
		s.BackupType = v1alpha1.BackupTypeFull
	}
	if s.CleanPolicy == "" {
		s.CleanPolicy = v1alpha1.CleanPolicyTypeRetain
	}
	// Only snapshot backups are retried (spec §9); log and volume-snapshot
	// backups keep an empty policy so nothing suggests they are.
	if s.BackupMode == v1alpha1.BackupModeSnapshot {
		p := &s.BackoffRetryPolicy
		if p.MinRetryDuration == "" {
			p.MinRetryDuration = defaultMinRetryDuration
		}
		if p.MaxRetryTimes == 0 {
			p.MaxRetryTimes = defaultMaxRetryTimes
		}
		if p.RetryTimeout == "" {
			p.RetryTimeout = defaultRetryTimeout
		}
	}
}
