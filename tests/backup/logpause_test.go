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

// TestLogBackupPauseResumeStop runs a log backup to the real S3 server
// through start → status → pause → status → resume → status → stop, each
// step a backup-manager run against the stand-in br (whose task state
// stands in for PD's etcd): the phase is Paused after pause, Running after
// resume and Stopped after stop, never Failed; logCheckpointTs appears
// with timeSynced, holds (and is not rewritten) while paused, and advances
// once resumed.
func TestLogBackupPauseResumeStop(t *testing.T) {
	f := newFixture(t)
	srv := startS3(t, f.env.Ctx)
	f.createBackup(t, "log", srv.provider("cluster-a/log"), func(b *v1alpha1.Backup) {
		b.Spec.BackupMode = v1alpha1.BackupModeLog
		b.Spec.CommitTs = "449000000000000000"
	})
	f.logStep(t, "log-start")
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
	held := f.logStep(t, "log-status")
	if checkpoint(t, held) != first || held.ResourceVersion != b.ResourceVersion {
		t.Errorf("while paused the checkpoint moved or was rewritten: %s (rv %s → %s)",
			held.Status.LogCheckpointTs, b.ResourceVersion, held.ResourceVersion)
	}

	b = f.logStep(t, "log-resume")
	if b.Status.Phase != v1alpha1.BackupRunning || condition.IsBackupPaused(b) {
		t.Fatalf("after log-resume: %+v, want Running", b.Status)
	}
	if next := checkpoint(t, f.logStep(t, "log-status")); next <= first {
		t.Errorf("logCheckpointTs %d did not advance past %d after resume", next, first)
	}

	b = f.logStep(t, "log-stop")
	if b.Status.Phase != v1alpha1.BackupStopped {
		t.Fatalf("after log-stop: %+v, want Stopped", b.Status)
	}
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
// log-resume and keeps its phase.
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
}
