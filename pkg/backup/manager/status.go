package manager

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

// Condition reasons the backup-manager writes.
const (
	ReasonInvalidStorage  = "InvalidStorage"
	ReasonBuildCommand    = "BuildCommandFailed"
	ReasonToolFailed      = "ToolFailed"
	ReasonNoSummary       = "NoBRSummary"
	ReasonSizeFailed      = "GetBackupSizeFailed"
	ReasonReadCredentials = "GetTiDBCredentialsFailed" //nolint:gosec // G101: a condition reason, not a credential
	ReasonCleanFailed     = "CleanBackupDataFailed"
)

// updateBackup re-reads the Backup, applies mutate to its status and writes
// it through the status subresource, retrying on conflict. mutate returns
// whether it changed anything; nothing is written when it did not.
func (m *Manager) updateBackup(ctx context.Context, mutate func(*v1alpha1.BackupStatus) bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b, err := m.Client.PingcapV1alpha1().Backups(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !mutate(&b.Status) {
			return nil
		}
		_, err = m.Client.PingcapV1alpha1().Backups(m.Opts.Namespace).UpdateStatus(ctx, b, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating the status of backup %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	return nil
}

// updateRestore is updateBackup for a Restore.
func (m *Manager) updateRestore(ctx context.Context, mutate func(*v1alpha1.RestoreStatus) bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		r, err := m.Client.PingcapV1alpha1().Restores(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !mutate(&r.Status) {
			return nil
		}
		_, err = m.Client.PingcapV1alpha1().Restores(m.Opts.Namespace).UpdateStatus(ctx, r, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating the status of restore %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	return nil
}

// setBackup returns a mutation applying fields, then setting condition c
// (True unless c says otherwise).
func (m *Manager) setBackup(c v1alpha1.BackupCondition, fields func(*v1alpha1.BackupStatus)) func(*v1alpha1.BackupStatus) bool {
	now := metav1.NewTime(m.now())
	if c.Status == "" {
		c.Status = corev1.ConditionTrue
	}
	c.Message = truncateMessage(c.Message)
	return func(st *v1alpha1.BackupStatus) bool {
		before := st.DeepCopy()
		if fields != nil {
			fields(st)
		}
		condition.SetBackupCondition(st, c, now)
		return !equalBackupStatus(before, st)
	}
}

// setRestore returns a mutation setting condition typ True with reason and
// message, then applying fields.
func (m *Manager) setRestore(typ v1alpha1.RestoreConditionType, reason, message string, fields func(*v1alpha1.RestoreStatus)) func(*v1alpha1.RestoreStatus) bool {
	now := metav1.NewTime(m.now())
	return func(st *v1alpha1.RestoreStatus) bool {
		before := st.DeepCopy()
		if fields != nil {
			fields(st)
		}
		condition.SetRestoreCondition(st, v1alpha1.RestoreCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: truncateMessage(message)}, now)
		return !equalRestoreStatus(before, st)
	}
}

// timeTaken formats how long something took, to the second.
func timeTaken(from, to time.Time) string {
	return to.Sub(from).Round(time.Second).String()
}

// truncateMessage keeps a condition message readable.
func truncateMessage(s string) string {
	const maxLen = 1024
	if len(s) > maxLen {
		return s[:maxLen] + "…"
	}
	return s
}
