//go:build integration

package backup

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

// logStep runs the backup-manager's log subcommand sub for Backup log and
// returns the Backup after it; the Backup must never be Failed.
func (f *fixture) logStep(t *testing.T, sub string) *v1alpha1.Backup {
	t.Helper()
	if code, out := f.runManager(t, nil, "backup", "--namespace="+f.env.Namespace, "--backupName=log",
		"--tikvVersion=v8.5.0", "--mode=log", "--subcommand="+sub); code != 0 {
		t.Fatalf("%s exited %d:\n%s", sub, code, out)
	}
	b := f.backup(t, "log")
	if condition.IsBackupFailed(b) || b.Status.Phase == v1alpha1.BackupFailed {
		t.Fatalf("after %s the Backup is Failed: %+v", sub, b.Status)
	}
	return b
}

// checkpoint is status.logCheckpointTs as a number (0 when unset).
func checkpoint(t *testing.T, b *v1alpha1.Backup) uint64 {
	t.Helper()
	if b.Status.LogCheckpointTs == "" {
		return 0
	}
	ts, err := strconv.ParseUint(b.Status.LogCheckpointTs, 10, 64)
	if err != nil {
		t.Fatalf("logCheckpointTs %q: %v", b.Status.LogCheckpointTs, err)
	}
	return ts
}

// subStatus fails unless b's status.logSubCommandStatuses entry of cmd is
// in phase, started, and (finished) completed no earlier than started.
func subStatus(t *testing.T, b *v1alpha1.Backup, cmd string, phase v1alpha1.BackupConditionType, finished bool) v1alpha1.LogSubCommandStatus {
	t.Helper()
	sub, ok := b.Status.LogSubCommandStatuses[v1alpha1.LogSubCommandType(cmd)]
	if !ok || string(sub.Command) != cmd || sub.Phase != phase || sub.TimeStarted.IsZero() || len(sub.Conditions) == 0 {
		t.Fatalf("logSubCommandStatuses[%s] = %+v (all: %+v), want phase %s, started", cmd, sub, b.Status.LogSubCommandStatuses, phase)
	}
	if finished != !sub.TimeCompleted.IsZero() || (finished && sub.TimeCompleted.Before(&sub.TimeStarted)) {
		t.Fatalf("logSubCommandStatuses[%s] times %v → %v, want finished=%t", cmd, sub.TimeStarted, sub.TimeCompleted, finished)
	}
	return sub
}

// TestLogBackupPauseResumeStop runs a log backup to the real S3 server
// through start → status → pause → status → resume → status → stop, each
// step a backup-manager run against the stand-in br (whose task state
// stands in for PD's etcd): the phase is Paused after pause, Running after
// resume and Stopped after stop, never Failed, and each subcommand's
// status.logSubCommandStatuses entry says so (pause Repeatable once
// resumed); logCheckpointTs appears
// with timeSynced, holds (and is not rewritten) while paused, and advances
// once resumed.
func TestLogBackupPauseResumeStop(t *testing.T) {
	f := newFixture(t)
	srv := startS3(t, f.env.Ctx)
	f.createBackup(t, "log", srv.provider("cluster-a/log"), func(b *v1alpha1.Backup) {
		b.Spec.BackupMode = v1alpha1.BackupModeLog
		b.Spec.CommitTs = "449000000000000000"
	})
	start := subStatus(t, f.logStep(t, "log-start"), "log-start", v1alpha1.BackupComplete, true)
	if len(start.Conditions) != 2 || start.Conditions[0].Type != v1alpha1.BackupRunning {
		t.Errorf("log-start conditions %+v, want Running then Complete", start.Conditions)
	}
	synced := f.logStep(t, "log-status")
	first := checkpoint(t, synced)
	if first <= 449000000000000000 {
		t.Fatalf("logCheckpointTs %d did not appear past the start TSO", first)
	}
	if synced.Status.TimeSynced == nil {
		t.Errorf("status.timeSynced not written with the checkpoint: %+v", synced.Status)
	}

	b := f.logStep(t, "log-pause")
	if b.Status.Phase != condition.BackupPaused || !condition.IsBackupPaused(b) {
		t.Fatalf("after log-pause: %+v, want Paused", b.Status)
	}
	subStatus(t, b, "log-pause", v1alpha1.BackupComplete, true)
	held := f.logStep(t, "log-status")
	if checkpoint(t, held) != first || held.ResourceVersion != b.ResourceVersion {
		t.Errorf("while paused the checkpoint moved or was rewritten: %s (rv %s → %s)",
			held.Status.LogCheckpointTs, b.ResourceVersion, held.ResourceVersion)
	}

	b = f.logStep(t, "log-resume")
	if b.Status.Phase != v1alpha1.BackupRunning || condition.IsBackupPaused(b) {
		t.Fatalf("after log-resume: %+v, want Running", b.Status)
	}
	subStatus(t, b, "log-resume", v1alpha1.BackupComplete, true)
	subStatus(t, b, "log-pause", v1alpha1.BackupRepeatable, true)
	if next := checkpoint(t, f.logStep(t, "log-status")); next <= first {
		t.Errorf("logCheckpointTs %d did not advance past %d after resume", next, first)
	}

	b = f.logStep(t, "log-stop")
	if b.Status.Phase != v1alpha1.BackupStopped {
		t.Fatalf("after log-stop: %+v, want Stopped", b.Status)
	}
	subStatus(t, b, "log-stop", v1alpha1.BackupStopped, true)
	subStatus(t, b, "log-start", v1alpha1.BackupComplete, true)
	args := f.brArgs(t)
	for i, want := range []string{"log start", "log status --task-name=log --json", "log pause --task-name=log",
		"log status", "log resume --task-name=log", "log status", "log stop --task-name=log"} {
		if i >= len(args) || !strings.HasPrefix(args[i], want) {
			t.Errorf("br call %d = %q, want %q…", i, args, want)
		}
	}
}

// TestLogResumeOfMissingTaskFailsOnlyItself resumes a task br does not
// know: the run fails, the Backup records a False Failed condition for
// log-resume and keeps its phase; only log-resume's own status is Failed.
func TestLogResumeOfMissingTaskFailsOnlyItself(t *testing.T) {
	f := newFixture(t)
	srv := startS3(t, f.env.Ctx)
	f.createBackup(t, "log", srv.provider("cluster-a/gone"), func(b *v1alpha1.Backup) { b.Spec.BackupMode = v1alpha1.BackupModeLog })
	if code, out := f.runManager(t, nil, "backup", "--namespace="+f.env.Namespace, "--backupName=log",
		"--tikvVersion=v8.5.0", "--mode=log", "--subcommand=log-resume"); code == 0 {
		t.Fatalf("resuming a missing task succeeded:\n%s", out)
	}
	b := f.backup(t, "log")
	fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed)
	if fc == nil || fc.Status != "False" || fc.Command != "log-resume" || fc.Reason != "ResumeLogBackuFailed" || b.Status.Phase == v1alpha1.BackupFailed {
		t.Fatalf("status %+v, want a False Failed for log-resume only", b.Status)
	}
	if sub := subStatus(t, b, "log-resume", v1alpha1.BackupFailed, true); sub.Conditions[0].Reason != "ResumeLogBackuFailed" {
		t.Fatalf("log-resume status %+v, want its failure's reason", sub)
	}
}
