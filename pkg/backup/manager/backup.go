package manager

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/manager/command"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// ErrFailed is returned (wrapped) once the manager has recorded a failure in
// the CR's status: the process should exit non-zero so the Job fails too.
var ErrFailed = errors.New("recorded as Failed")

// Backup runs `backup`: a snapshot backup with BR (or, with Opts.Mode "log",
// the log backup subcommand), Running → Complete with backupPath, backupSize,
// commitTs and times, or Failed with the reason. A Backup already Complete
// or Failed is left alone. log-pause and log-resume never fail the Backup
// (runPauseResume); log-status only refreshes status.logCheckpointTs. It errors when the CR cannot be read or written,
// or (wrapping ErrFailed) when the backup failed.
func (m *Manager) Backup(ctx context.Context) error {
	b, err := m.Client.PingcapV1alpha1().Backups(m.Opts.Namespace).Get(ctx, m.Opts.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading backup %s/%s: %w", m.Opts.Namespace, m.Opts.Name, err)
	}
	if m.Opts.Mode != string(v1alpha1.BackupModeLog) && condition.IsBackupFinished(b) {
		m.logf("backup %s/%s already finished (%s); nothing to do", b.Namespace, b.Name, b.Status.Phase)
		return nil
	}
	loc, err := storage.LocationOf(b.Spec.StorageProvider)
	if err != nil {
		return m.failBackup(ctx, ReasonInvalidStorage, err, "")
	}
	var args []string
	if m.Opts.Mode == string(v1alpha1.BackupModeLog) {
		args, err = command.BRLog(b, loc, m.Opts.ClusterTLS, m.Opts.Subcommand)
	} else {
		args, err = command.BRBackup(b, loc, m.Opts.ClusterTLS)
	}
	if err != nil {
		return m.failBackup(ctx, ReasonBuildCommand, err, "")
	}
	switch sub := m.logCommand(); {
	case sub == "log-status":
		return m.syncCheckpoint(ctx, args)
	case pauseOrResume(string(sub)):
		return m.runPauseResume(ctx, args)
	}
	started := m.now()
	if err := m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupRunning, Command: m.logCommand()},
		func(st *v1alpha1.BackupStatus) {
			st.TimeStarted = metav1.NewTime(started)
			st.BackupPath = loc.URL()
		})); err != nil {
		return err
	}
	if m.Opts.Mode == string(v1alpha1.BackupModeLog) {
		res, err := m.runTool(ctx, m.brPath(), args)
		if err != nil {
			return m.failBackup(ctx, ReasonToolFailed, err, res.failure())
		}
		return m.completeLog(ctx, b)
	}
	res, err := m.runGuarded(ctx, b.Spec.From, b.Spec.TikvGCLifeTime, m.brPath(), args, m.failBackup)
	if err != nil {
		return err
	}
	return m.completeSnapshot(ctx, loc, res)
}

// failFunc records a failure with reason, cause and the tool's last lines.
type failFunc func(ctx context.Context, reason string, cause error, detail string) error

// runGuarded runs the tool inside the GC life-time dance of access
// (raiseGCLifeTime): raised before, put back after, whatever the tool did.
// A failed step, the tool's failure or the failed reset is recorded by fail,
// whose error it returns.
func (m *Manager) runGuarded(ctx context.Context, access *v1alpha1.TiDBAccessConfig, want *string,
	tool string, args []string, fail failFunc) (toolResult, error) {
	guard, err := m.raiseGCLifeTime(ctx, access, want)
	if err != nil {
		reason, cause := gcFailure(err, ReasonConnectTiDB)
		return toolResult{}, fail(ctx, reason, cause, "")
	}
	res, runErr := m.runTool(ctx, tool, args)
	if err := guard.reset(m); err != nil {
		reason, cause := gcFailure(err, ReasonResetGCLifeTime)
		detail := ""
		if runErr != nil {
			detail = "the tool failed too: " + runErr.Error()
		}
		return res, fail(ctx, reason, cause, detail)
	}
	if runErr != nil {
		return res, fail(ctx, ReasonToolFailed, runErr, res.failure())
	}
	return res, nil
}

// logCommand is the log backup subcommand the conditions carry.
func (m *Manager) logCommand() v1alpha1.LogSubCommandType {
	if m.Opts.Mode != string(v1alpha1.BackupModeLog) {
		return ""
	}
	return v1alpha1.LogSubCommandType(m.Opts.Subcommand)
}

// completeSnapshot reads BR's summary (it must say success and carry the
// TSO) and sizes the backup from storage, then writes Complete.
func (m *Manager) completeSnapshot(ctx context.Context, loc storage.Location, res toolResult) error {
	s, ok := res.lastSummary()
	if !ok || !s.Succeeded || s.CommitTs() == "" {
		return m.failBackup(ctx, ReasonNoSummary,
			fmt.Errorf("BR exited 0 without a success summary carrying BackupTS"), res.failure())
	}
	size, err := m.sizeOf(ctx, loc)
	if err != nil {
		return m.failBackup(ctx, ReasonSizeFailed, err, "")
	}
	done := m.now()
	return m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupComplete},
		func(st *v1alpha1.BackupStatus) {
			st.BackupPath = loc.URL()
			st.BackupSize = size
			st.BackupSizeReadable = HumanBytes(size)
			st.CommitTs = s.CommitTs()
			st.TimeCompleted = metav1.NewTime(done)
			st.TimeTaken = timeTaken(st.TimeStarted.Time, done)
		}))
}

// completeLog records a finished log backup command: Complete for log-start
// (commitTs = spec.commitTs), Stopped for log-stop, logSuccessTruncateUntil
// for log-truncate.
func (m *Manager) completeLog(ctx context.Context, b *v1alpha1.Backup) error {
	done := metav1.NewTime(m.now())
	c := v1alpha1.BackupCondition{Type: v1alpha1.BackupComplete, Command: m.logCommand()}
	fields := func(st *v1alpha1.BackupStatus) {
		st.TimeCompleted = done
		st.TimeTaken = timeTaken(st.TimeStarted.Time, done.Time)
	}
	switch m.Opts.Subcommand {
	case "log-start":
		fields = func(st *v1alpha1.BackupStatus) {
			st.CommitTs = b.Spec.CommitTs
			st.TimeCompleted = done
			st.TimeTaken = timeTaken(st.TimeStarted.Time, done.Time)
		}
	case "log-stop":
		c.Type = v1alpha1.BackupStopped
	case "log-truncate":
		fields = func(st *v1alpha1.BackupStatus) { st.LogSuccessTruncateUntil = b.Spec.LogTruncateUntil }
	}
	return m.updateBackup(ctx, m.setBackup(c, fields))
}

// failBackup records Failed with reason and cause (plus the tool's last
// lines), and returns the cause wrapped in ErrFailed; a failed log-pause,
// log-resume or log-status fails only itself (failSubcommand).
func (m *Manager) failBackup(ctx context.Context, reason string, cause error, detail string) error {
	if sub := string(m.logCommand()); sub == "log-status" || pauseOrResume(sub) {
		return m.failSubcommand(ctx, fmt.Errorf("%s: %w", reason, cause), detail)
	}
	msg := cause.Error()
	if detail != "" {
		msg += ": " + detail
	}
	m.logf("backup %s/%s failed: %s: %s", m.Opts.Namespace, m.Opts.Name, reason, msg)
	if err := m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupFailed,
		Command: m.logCommand(), Reason: reason, Message: msg}, nil)); err != nil {
		return errors.Join(fmt.Errorf("%w: %w", ErrFailed, cause), err)
	}
	return fmt.Errorf("%w: %s: %w", ErrFailed, reason, cause)
}
