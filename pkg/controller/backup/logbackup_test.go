package backup

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

func TestLogBackupStartTruncateStop(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	deps, c := backupFixture(t, b, cluster())

	// Start: Prepare, then the start Job and Scheduled, both for log-start.
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk-log-start") == nil {
		t.Fatal("no start Job")
	}
	got := stored(t, deps, "bk")
	for _, typ := range []v1alpha1.BackupConditionType{v1alpha1.BackupPrepare, v1alpha1.BackupScheduled} {
		if cond := condOf(got, typ); cond == nil || cond.Command != logStart || cond.Status != corev1.ConditionTrue {
			t.Fatalf("%s = %+v, want True for log-start", typ, cond)
		}
	}
	// While the start Job runs nothing else happens, even with a truncation asked for.
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) { b.Spec.LogTruncateUntil = "100" })
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)

	// Started: the truncation runs once per TSO.
	finishJob(t, deps, "backup-bk-log-start", batchv1.JobComplete, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	trunc := storedJob(t, deps, "backup-bk-log-truncate")
	if trunc == nil || trunc.Annotations[AnnTruncateUntil] != "100" {
		t.Fatalf("truncate Job %+v", trunc)
	}
	finishJob(t, deps, "backup-bk-log-truncate", batchv1.JobComplete, deps.FakeClock.Now())
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
	// A later TSO replaces the finished truncate Job.
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
		b.Spec.LogTruncateUntil = "200"
		b.Status.LogSuccessTruncateUntil = "100"
	})
	requeueAfter(t, syncBackup(t, deps, c))
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if trunc := storedJob(t, deps, "backup-bk-log-truncate"); trunc == nil || trunc.Annotations[AnnTruncateUntil] != "200" {
		t.Fatalf("truncate Job %+v, want one for 200", trunc)
	}
	if sub := stored(t, deps, "bk").Status.LogSubCommandStatuses["log-truncate"]; sub.LogTruncatingUntil != "200" || sub.Phase != v1alpha1.BackupScheduled {
		t.Fatalf("log-truncate status %+v, want truncating until 200, Scheduled", sub)
	}

	// Stop: the stop Job, then Stopped once it completed.
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) { b.Spec.LogStop = true })
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk-log-stop") == nil {
		t.Fatal("no stop Job")
	}
	finishJob(t, deps, "backup-bk-log-stop", batchv1.JobComplete, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, deps, "bk"); !condition.IsBackupTrue(got, v1alpha1.BackupStopped) || got.Status.Phase != v1alpha1.BackupStopped {
		t.Fatalf("status %+v, want Stopped", got.Status)
	}
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
}

func TestFailedStartJobFailsTheLogBackup(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	finishJob(t, deps, "backup-bk-log-start", batchv1.JobFailed, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	if cond := condOf(got, v1alpha1.BackupFailed); cond == nil || cond.Command != logStart || cond.Reason != "BackoffLimitExceeded" ||
		len(got.Status.BackoffRetryStatus) != 0 {
		t.Fatalf("status %+v, want Failed for log-start and no retry", got.Status)
	}
}

// TestLogBackupStartedUnderTheEarlierJobNameIsNotStartedAgain: a log
// backup whose start Job carries the name earlier versions gave it
// (backup-<name>-start) is taken as started after an upgrade, not started
// a second time under v1.6's name.
func TestLogBackupStartedUnderTheEarlierJobNameIsNotStartedAgain(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	legacy := &batchv1.Job{}
	legacy.Name, legacy.Namespace = "backup-bk-start", "ns"
	legacy.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	deps, c := backupFixture(t, b, cluster(), legacy)
	_ = syncBackup(t, deps, c)
	if storedJob(t, deps, "backup-bk-log-start") != nil {
		t.Fatal("the log backup was started again under the new Job name")
	}
}
