package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

// Condition reasons of the log backup subcommands that do not fail the Backup.
const (
	ReasonLogPaused       = "LogBackupPaused"
	ReasonLogResumed      = "LogBackupResumed"
	ReasonPauseLogFailed  = "PauseLogBackupFailed"
	ReasonResumeLogFailed = "ResumeLogBackuFailed" // v1.6's spelling
	ReasonLogStatusFailed = "LogBackupStatusFailed"
)

// pauseOrResume reports whether sub is log-pause or log-resume: their
// failure fails only that subcommand, never the whole Backup.
func pauseOrResume(sub string) bool { return sub == "log-pause" || sub == "log-resume" }

// runPauseResume runs `br log pause|resume` (args): success makes the
// phase Paused (pause, Running set False) or Running (resume, Paused set
// False); failure
// records a False Failed condition carrying the subcommand and reason
// PauseLogBackupFailed or ResumeLogBackuFailed, leaving the phase, and
// returns the cause wrapped in ErrFailed so the Job fails.
func (m *Manager) runPauseResume(ctx context.Context, args []string) error {
	cmd := m.logCommand()
	res, err := m.runTool(ctx, m.brPath(), args)
	if err != nil {
		return m.failSubcommand(ctx, err, res.failure())
	}
	typ, other, reason, msg := v1alpha1.BackupRunning, condition.BackupPaused, ReasonLogResumed, "log backup task resumed"
	if cmd == "log-pause" {
		typ, other, reason, msg = condition.BackupPaused, v1alpha1.BackupRunning, ReasonLogPaused, "log backup task paused"
	}
	now := metav1.NewTime(m.now())
	return m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: typ, Command: cmd, Reason: reason, Message: msg},
		func(st *v1alpha1.BackupStatus) {
			// The opposite state turns False, so each pause and resume
			// moves both transition times (the controller orders Jobs by them).
			if c := condition.GetBackupCondition(st, other); c != nil && c.Status == corev1.ConditionTrue {
				condition.SetBackupCondition(st, v1alpha1.BackupCondition{Type: other, Status: corev1.ConditionFalse,
					Command: cmd, Reason: reason, Message: msg}, now)
			}
		}))
}

// failSubcommand records the failure of log-pause or log-resume as a False
// Failed condition carrying the subcommand and reason PauseLogBackupFailed
// or ResumeLogBackuFailed (the phase stays); a failed log-status writes
// nothing. It returns the cause wrapped in ErrFailed so the Job fails.
func (m *Manager) failSubcommand(ctx context.Context, cause error, detail string) error {
	cmd := m.logCommand()
	msg := cause.Error()
	if detail != "" {
		msg += ": " + detail
	}
	m.logf("%s of backup %s/%s failed: %s", cmd, m.Opts.Namespace, m.Opts.Name, msg)
	if cmd == "log-status" {
		return fmt.Errorf("%w: %s: %w", ErrFailed, ReasonLogStatusFailed, cause)
	}
	reason := ReasonPauseLogFailed
	if cmd == "log-resume" {
		reason = ReasonResumeLogFailed
	}
	werr := m.updateBackup(ctx, m.setBackup(v1alpha1.BackupCondition{Type: v1alpha1.BackupFailed, Status: corev1.ConditionFalse,
		Command: cmd, Reason: reason, Message: msg}, nil))
	if werr != nil {
		return fmt.Errorf("%w: %s: %w (%w)", ErrFailed, reason, cause, werr)
	}
	return fmt.Errorf("%w: %s: %w", ErrFailed, reason, cause)
}

// logTaskStatus is one task of `br log status --json`.
type logTaskStatus struct {
	Name       string      `json:"name"`
	Status     string      `json:"status"`
	Checkpoint json.Number `json:"checkpoint"`
}

// syncCheckpoint runs `br log status --json` (args) and writes the task's
// checkpoint TSO to status.logCheckpointTs, with status.timeSynced the time
// it was read, when it is positive, as v1.6's tracker does; a paused backup
// is not written (tracking pauses with the phase). It records no condition;
// a failed or unreadable status is an error.
func (m *Manager) syncCheckpoint(ctx context.Context, args []string) error {
	res, err := m.runTool(ctx, m.brPath(), args)
	if err != nil {
		return m.failSubcommand(ctx, err, res.failure())
	}
	ts, err := checkpointOf(res.tail, m.Opts.Name)
	if err != nil {
		return m.failSubcommand(ctx, err, "")
	}
	if ts == 0 {
		return nil
	}
	want, synced := strconv.FormatUint(ts, 10), metav1.NewTime(m.now())
	return m.updateBackup(ctx, func(st *v1alpha1.BackupStatus) bool {
		if st.Phase == condition.BackupPaused {
			return false // tracking pauses with the phase, as v1.6's
		}
		st.LogCheckpointTs = want
		st.TimeSynced = &synced
		return true
	})
}

// checkpointOf finds task's checkpoint TSO in the last JSON array line of
// lines (the output of `br log status --json`).
func checkpointOf(lines []string, task string) (uint64, error) {
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "[") {
			continue
		}
		var tasks []logTaskStatus
		if err := json.Unmarshal([]byte(line), &tasks); err != nil {
			return 0, fmt.Errorf("parsing br log status: %w", err)
		}
		for _, t := range tasks {
			if t.Name == task {
				return strconv.ParseUint(t.Checkpoint.String(), 10, 64)
			}
		}
		return 0, fmt.Errorf("br log status lists no task %q", task)
	}
	return 0, fmt.Errorf("br log status printed no JSON task list")
}
