package backup

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

func TestLogSubcommandResolution(t *testing.T) {
	t.Parallel()
	cases := []struct {
		spec  v1alpha1.LogSubCommandType
		stop  bool
		phase v1alpha1.BackupConditionType
		want  string
	}{
		{"", false, "", logStart}, {"", false, condition.BackupPaused, logResume}, {"", true, condition.BackupPaused, logStop},
		{"", false, v1alpha1.BackupStopped, logStop}, {"log-start", false, v1alpha1.BackupComplete, logStart},
		{"log-start", false, condition.BackupPaused, logResume}, {"log-pause", false, v1alpha1.BackupRunning, logPause},
		{"log-stop", false, condition.BackupPaused, logStop}, {"log-bogus", false, "", "log-bogus"},
	}
	for _, tc := range cases {
		b := &v1alpha1.Backup{Spec: v1alpha1.BackupSpec{LogSubcommand: tc.spec, LogStop: tc.stop}, Status: v1alpha1.BackupStatus{Phase: tc.phase}}
		if got := logSubcommand(b, b); got != tc.want {
			t.Errorf("spec %q stop %t phase %q: %s, want %s", tc.spec, tc.stop, tc.phase, got, tc.want)
		}
	}
}

// managerWrites sets condition typ True for sub (and the opposite of
// Paused/Running False) as the backup-manager does when the sub Job
// succeeds, then completes the Job, a second later.
func managerWrites(t *testing.T, deps *controller.FakeDependencies, sub string, typ v1alpha1.BackupConditionType) {
	t.Helper()
	deps.FakeClock.Step(time.Second)
	now := metav1.NewTime(deps.FakeClock.Now())
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
		cmd := v1alpha1.LogSubCommandType(sub)
		other := map[v1alpha1.BackupConditionType]v1alpha1.BackupConditionType{
			condition.BackupPaused: v1alpha1.BackupRunning, v1alpha1.BackupRunning: condition.BackupPaused}[typ]
		if condOf(b, other) != nil && sub != logStart {
			condition.SetBackupCondition(&b.Status, v1alpha1.BackupCondition{Type: other, Status: corev1.ConditionFalse, Command: cmd}, now)
		}
		condition.SetBackupCondition(&b.Status, v1alpha1.BackupCondition{Type: typ, Status: corev1.ConditionTrue, Command: cmd}, now)
	})
	finishJob(t, deps, LogJobName("bk", sub), batchv1.JobComplete, deps.FakeClock.Now())
}

// startedLogBackup is a log backup whose start Job completed.
func startedLogBackup(t *testing.T) (*controller.FakeDependencies, *Controller[*v1alpha1.Backup]) {
	t.Helper()
	b := validBackup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	managerWrites(t, deps, logStart, v1alpha1.BackupComplete)
	return deps, c
}

// setSubcommand edits spec.logSubcommand and syncs once; replacing says
// the sync replaces a finished Job of an earlier request (requeue), and
// syncs once more.
func setSubcommand(t *testing.T, deps *controller.FakeDependencies, c *Controller[*v1alpha1.Backup], sub v1alpha1.LogSubCommandType, replacing bool) {
	t.Helper()
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) { b.Spec.LogSubcommand = sub })
	if replacing {
		requeueAfter(t, syncBackup(t, deps, c))
	}
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
}

func TestLogPauseResumeStopInSequence(t *testing.T) {
	t.Parallel()
	deps, c := startedLogBackup(t)
	for round := range 2 {
		setSubcommand(t, deps, c, "log-pause", round == 1) // round 1 replaces round 0's Job
		j := storedJob(t, deps, "backup-bk-log-pause")
		if j == nil || jobFinished(j) || j.Spec.Template.Spec.Containers[0].Args[5] != "--subcommand=log-pause" {
			t.Fatalf("round %d: pause Job %+v", round, j)
		}
		if got := stored(t, deps, "bk"); condition.IsBackupFailed(got) || got.Status.Phase == condition.BackupPaused {
			t.Fatalf("round %d: status %+v before the pause Job finished", round, got.Status)
		}
		managerWrites(t, deps, logPause, condition.BackupPaused)
		if err := syncBackup(t, deps, c); err != nil {
			t.Fatal(err)
		}
		expectNoWrites(t, deps)
		expectSubPhase(t, stored(t, deps, "bk"), logPause, v1alpha1.BackupComplete, v1alpha1.BackupScheduled)

		// Resume: log-start on a Paused backup.
		setSubcommand(t, deps, c, "log-start", round == 1)
		if j := storedJob(t, deps, "backup-bk-log-resume"); j == nil || jobFinished(j) {
			t.Fatalf("round %d: resume Job %+v", round, j)
		}
		managerWrites(t, deps, logResume, v1alpha1.BackupRunning)
		if err := syncBackup(t, deps, c); err != nil {
			t.Fatal(err)
		}
		expectNoWrites(t, deps)
		if got := stored(t, deps, "bk"); got.Status.Phase != v1alpha1.BackupRunning || condition.IsBackupFailed(got) {
			t.Fatalf("round %d: status %+v, want Running", round, got.Status)
		}
		expectSubPhase(t, stored(t, deps, "bk"), logResume, v1alpha1.BackupComplete, v1alpha1.BackupScheduled)
		expectSubPhase(t, stored(t, deps, "bk"), logPause, v1alpha1.BackupRepeatable, v1alpha1.BackupScheduled)
	}
	setSubcommand(t, deps, c, "log-stop", false)
	finishJob(t, deps, "backup-bk-log-stop", batchv1.JobComplete, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, deps, "bk"); got.Status.Phase != v1alpha1.BackupStopped {
		t.Fatalf("status %+v, want Stopped", got.Status)
	}
	expectSubPhase(t, stored(t, deps, "bk"), logStop, v1alpha1.BackupStopped, v1alpha1.BackupPrepare)
	expectSubPhase(t, stored(t, deps, "bk"), logStart, v1alpha1.BackupComplete, v1alpha1.BackupPrepare)
}

// expectSubPhase fails unless b's status of subcommand cmd is in phase,
// started and carrying a condition of type first first.
func expectSubPhase(t *testing.T, b *v1alpha1.Backup, cmd string, phase, first v1alpha1.BackupConditionType) {
	t.Helper()
	sub, ok := b.Status.LogSubCommandStatuses[v1alpha1.LogSubCommandType(cmd)]
	if !ok || sub.Command != v1alpha1.LogSubCommandType(cmd) || sub.Phase != phase || sub.TimeStarted.IsZero() ||
		len(sub.Conditions) == 0 || sub.Conditions[0].Type != first {
		t.Fatalf("%s status %+v, want phase %s, started, first condition %s", cmd, sub, phase, first)
	}
}

func TestPauseWaitsForStartAndFailsOnlyItself(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	b.Spec.LogSubcommand = "log-pause"
	deps, c := backupFixture(t, b, cluster())
	requeueAfter(t, syncBackup(t, deps, c))
	if storedJob(t, deps, "backup-bk-log-pause") != nil {
		t.Fatal("a pause Job before the log backup started")
	}

	deps, c = startedLogBackup(t)
	setSubcommand(t, deps, c, "log-pause", false)
	finishJob(t, deps, "backup-bk-log-pause", batchv1.JobFailed, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	fc := condOf(got, v1alpha1.BackupFailed)
	if fc == nil || fc.Status != corev1.ConditionFalse || fc.Command != logPause || fc.Reason != ReasonPauseLogFailed ||
		got.Status.Phase != v1alpha1.BackupComplete {
		t.Fatalf("status %+v, want a False Failed for log-pause and the phase kept", got.Status)
	}
	expectEvent(t, events(deps), "Warning "+ReasonPauseLogFailed)
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
}
