package backup

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
)

func TestCheckpointRefreshedOnceAMinuteWhileRunning(t *testing.T) {
	t.Parallel()
	deps, c := startedLogBackup(t)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	j := storedJob(t, deps, "backup-bk-log-status")
	if j == nil || j.Spec.Template.Spec.Containers[0].Args[5] != "--subcommand=log-status" {
		t.Fatalf("status Job %+v", j)
	}
	before := stored(t, deps, "bk").ResourceVersion
	finishJob(t, deps, "backup-bk-log-status", batchv1.JobComplete, deps.FakeClock.Now())
	if d := requeueAfter(t, c.sync(context.Background(), "ns/bk")); d != checkpointPeriod {
		t.Errorf("requeued after %s, want %s", d, checkpointPeriod)
	}
	expectNoWrites(t, deps)
	deps.FakeClock.Step(checkpointPeriod + time.Second)
	requeueAfter(t, syncBackup(t, deps, c))
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if j := storedJob(t, deps, "backup-bk-log-status"); j == nil || jobFinished(j) {
		t.Fatalf("no new status Job after a minute: %+v", j)
	}
	if got := stored(t, deps, "bk").ResourceVersion; got != before {
		t.Errorf("the controller wrote the Backup (rv %s → %s)", before, got)
	}
}

func TestPausedBackupIsNotRefreshed(t *testing.T) {
	t.Parallel()
	deps, c := startedLogBackup(t)
	setSubcommand(t, deps, c, "log-pause", false)
	managerWrites(t, deps, logPause, "Paused")
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if j := storedJob(t, deps, "backup-bk-log-status"); j != nil {
		t.Fatalf("a status Job for a paused backup: %+v", j.Name)
	}
}
