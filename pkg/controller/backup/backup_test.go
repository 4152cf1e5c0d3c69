package backup

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// backupFixture is a Backup controller over fakes seeded with objs.
func backupFixture(t *testing.T, objs ...any) (*controller.FakeDependencies, *Controller[*v1alpha1.Backup]) {
	t.Helper()
	deps := controller.NewFakeDependencies()
	c, err := NewBackupController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, deps, objs...)
	return deps, c
}

// syncBackup syncs ns/bk once and settles the caches.
func syncBackup(t *testing.T, deps *controller.FakeDependencies, c *Controller[*v1alpha1.Backup]) error {
	t.Helper()
	err := c.sync(context.Background(), "ns/bk")
	settle(t, deps)
	return err
}

func TestFinalizerPerCleanPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy v1alpha1.CleanPolicyType
		mode   v1alpha1.BackupMode
		want   bool
	}{
		{"default is Retain", "", "", false},
		{"Retain", v1alpha1.CleanPolicyTypeRetain, "", false},
		{"Delete", v1alpha1.CleanPolicyTypeDelete, "", true},
		{"OnFailure", v1alpha1.CleanPolicyTypeOnFailure, "", true},
		{"log backup with Retain", v1alpha1.CleanPolicyTypeRetain, v1alpha1.BackupModeLog, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := validBackup()
			b.Spec.CleanPolicy, b.Spec.BackupMode = tc.policy, tc.mode
			deps, c := backupFixture(t, b, cluster())
			if err := syncBackup(t, deps, c); err != nil {
				t.Fatal(err)
			}
			got := stored(t, deps, "bk")
			if has := slices.Contains(got.Finalizers, Finalizer); has != tc.want {
				t.Fatalf("finalizers %v, want %s: %v", got.Finalizers, Finalizer, tc.want)
			}
			if got.Spec.CleanPolicy != tc.policy {
				t.Fatalf("the default cleanPolicy leaked into the stored spec: %q", got.Spec.CleanPolicy)
			}
		})
	}
}

func TestBackupCreatesJobThenConverges(t *testing.T) {
	t.Parallel()
	deps, c := backupFixture(t, validBackup(), cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk") == nil {
		t.Fatal("no Job backup-bk")
	}
	got := stored(t, deps, "bk")
	if got.Status.Phase != v1alpha1.BackupScheduled || condOf(got, v1alpha1.BackupScheduled) == nil {
		t.Fatalf("status %+v, want Scheduled", got.Status)
	}
	expectEvent(t, events(deps), "Normal JobCreated created Job backup-bk (backup)")

	// Converged: a second sync writes nothing and records nothing, while
	// the Job runs and after it completed with the backup-manager's status.
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	finishJob(t, deps, "backup-bk", batchv1.JobComplete, deps.FakeClock.Now())
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
		b.Status.Phase = v1alpha1.BackupComplete
		b.Status.Conditions = append(b.Status.Conditions, backupCond(v1alpha1.BackupComplete, "", ""))
	})
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
	if evs := events(deps); len(evs) != 0 {
		t.Fatalf("converged sync recorded %q", evs)
	}
}

// TestExistingJobIsRecordedAsScheduled: a Job created by an operator that
// stopped before writing Scheduled is recorded by the next one, once, and
// never created twice.
func TestExistingJobIsRecordedAsScheduled(t *testing.T) {
	t.Parallel()
	deps, c := backupFixture(t, validBackup(), cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) { b.Status = v1alpha1.BackupStatus{} }) // Scheduled lost
	settle(t, deps)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	if got.Status.Phase != v1alpha1.BackupScheduled || condOf(got, v1alpha1.BackupScheduled) == nil {
		t.Fatalf("status %+v, want Scheduled recorded from the existing Job", got.Status)
	}
	jobs, err := deps.FakeKube.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 1 {
		t.Fatalf("jobs %v (err %v), want the one Job", len(jobs.Items), err)
	}
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
}

// TestExportScratchVolumeFieldsAreNamed: a dumpling export's scratch-PVC
// fields are accepted but not acted on, and a Warning names them.
func TestExportScratchVolumeFieldsAreNamed(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BR = nil
	b.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "basic-tidb", SecretName: "pw"}
	sc := "fast"
	b.Spec.StorageClassName, b.Spec.StorageSize = &sc, "10Gi"
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk") == nil {
		t.Fatal("no export Job")
	}
	expectEvent(t, events(deps), "Warning Unsupported spec.storageClassName, spec.storageSize not acted on")
}

func TestJobCreateFailureIsRetryFailed(t *testing.T) {
	t.Parallel()
	deps, c := backupFixture(t, validBackup(), cluster())
	failJobCreates(deps)
	err := syncBackup(t, deps, c)
	if err == nil || flow.IsIgnore(err) || !strings.Contains(err.Error(), "quota exceeded") {
		t.Fatalf("want a retried error naming the cause, got %v", err)
	}
	got := stored(t, deps, "bk")
	cond := condOf(got, v1alpha1.BackupRetryFailed)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != ReasonCreateBackupJobFail || got.Status.Phase != v1alpha1.BackupRetryFailed {
		t.Fatalf("status %+v, want RetryFailed CreateBackupJobFailed", got.Status)
	}
	expectEvent(t, events(deps), "Warning CreateBackupJobFailed")
}

func TestMissingClusterIsWaitedFor(t *testing.T) {
	t.Parallel()
	deps, c := backupFixture(t, validBackup())
	if d := requeueAfter(t, syncBackup(t, deps, c)); d != waitDelay {
		t.Fatalf("requeue after %s", d)
	}
	if storedJob(t, deps, "backup-bk") != nil {
		t.Fatal("a Job was created for a missing cluster")
	}
	expectEvent(t, events(deps), "Warning GetTidbClusterFailed")
	requeueAfter(t, syncBackup(t, deps, c))
	if evs := events(deps); len(evs) != 0 {
		t.Fatalf("the second wait recorded %q again", evs)
	}
}

// failCurrentJob fails the stored backup-bk with the backup-manager's
// Failed condition, as a run that failed would.
func failCurrentJob(t *testing.T, deps *controller.FakeDependencies) {
	t.Helper()
	finishJob(t, deps, "backup-bk", batchv1.JobFailed, deps.FakeClock.Now())
	mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
		b.Status.Phase = v1alpha1.BackupFailed
		b.Status.Conditions = slices.DeleteFunc(b.Status.Conditions, func(c v1alpha1.BackupCondition) bool { return c.Type == v1alpha1.BackupFailed })
		b.Status.Conditions = append(b.Status.Conditions, backupCond(v1alpha1.BackupFailed, "BRFailed", "br exited 1"))
	})
}

func TestFailedJobIsRetriedPerPolicyThenFailed(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "10s", MaxRetryTimes: 2, RetryTimeout: "30m"}
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	for retry, delay := range []time.Duration{10 * time.Second, 20 * time.Second} {
		num := retry + 1
		failCurrentJob(t, deps)
		if d := requeueAfter(t, syncBackup(t, deps, c)); d != delay {
			t.Fatalf("retry %d: requeued after %s, want %s", num, d, delay)
		}
		got := stored(t, deps, "bk")
		rec := got.Status.BackoffRetryStatus
		if len(rec) != num || rec[num-1].RetryNum != num || rec[num-1].RealRetryAt != nil ||
			!rec[num-1].ExpectedRetryAt.Time.Equal(deps.FakeClock.Now().Add(delay)) || !strings.Contains(rec[num-1].RetryReason, "br exited 1") {
			t.Fatalf("retry %d: records %+v", num, rec)
		}
		if got.Status.Phase != backupRestart || condOf(got, v1alpha1.BackupFailed).Status != corev1.ConditionFalse {
			t.Fatalf("retry %d: status %+v, want phase Restart and Failed False", num, got.Status)
		}
		expectEvent(t, events(deps), "Warning RetryScheduled")

		// Not due yet: wait the rest, writing nothing.
		deps.FakeClock.Step(delay / 2)
		if d := requeueAfter(t, c.sync(context.Background(), "ns/bk")); d != delay/2 {
			t.Fatalf("retry %d: requeued after %s before it is due", num, d)
		}
		expectNoWrites(t, deps)

		deps.FakeClock.Step(delay / 2)
		if err := syncBackup(t, deps, c); err != nil {
			t.Fatalf("retry %d: %v", num, err)
		}
		job := storedJob(t, deps, "backup-bk")
		if job == nil || job.Annotations[AnnRetryNum] != string(rune('0'+num)) || jobFailed(job) != nil {
			t.Fatalf("retry %d: Job %+v, want a new one for run %d", num, job, num)
		}
		got = stored(t, deps, "bk")
		if got.Status.BackoffRetryStatus[num-1].RealRetryAt == nil || got.Status.Phase != v1alpha1.BackupScheduled {
			t.Fatalf("retry %d: status %+v", num, got.Status)
		}
		events(deps)
	}
	// The third failure: no retry left.
	failCurrentJob(t, deps)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	if cond := condOf(got, v1alpha1.BackupFailed); got.Status.Phase != v1alpha1.BackupFailed || cond.Reason != ReasonRetryExhausted ||
		len(got.Status.BackoffRetryStatus) != 2 {
		t.Fatalf("status %+v, want Failed after 2 retries", got.Status)
	}
	expectEvent(t, events(deps), "Warning BackoffRetryExhausted")
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk") == nil || len(events(deps)) != 0 {
		t.Fatal("a failed backup was touched again")
	}
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
}

func TestRetryTimeoutGivesUp(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "10m", MaxRetryTimes: 5, RetryTimeout: "15m"}
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	failCurrentJob(t, deps)
	requeueAfter(t, syncBackup(t, deps, c))
	deps.FakeClock.Step(10 * time.Minute)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	// The second retry would be due 20m after this failure, 30m after the first.
	failCurrentJob(t, deps)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	if cond := condOf(got, v1alpha1.BackupFailed); cond.Status != corev1.ConditionTrue || cond.Reason != ReasonRetryExhausted ||
		!strings.Contains(cond.Message, "retryTimeout") {
		t.Fatalf("Failed %+v, want the retry timeout", cond)
	}
}

func TestJobFailedWithoutStatusFailsTheBackup(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "1s", MaxRetryTimes: 1, RetryTimeout: "1s"}
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	// The process died: the Job failed, the Backup says nothing.
	finishJob(t, deps, "backup-bk", batchv1.JobFailed, deps.FakeClock.Now())
	requeueAfter(t, syncBackup(t, deps, c))
	deps.FakeClock.Step(time.Second)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	finishJob(t, deps, "backup-bk", batchv1.JobFailed, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	cond := condOf(got, v1alpha1.BackupFailed)
	if cond == nil || cond.Status != corev1.ConditionTrue || !strings.Contains(cond.Message, "BackoffLimitExceeded") {
		t.Fatalf("Failed %+v, want the Job's reason", cond)
	}
}

// TestManagerFailedIsReportedOnceWhenTheJobFails: the backup-manager wrote
// Failed itself (S3 went down mid-backup) and no retry is allowed; when the
// Job fails the controller keeps the manager's reason, appends why it is not
// retried and writes one Warning event, and a resync writes nothing more.
func TestManagerFailedIsReportedOnceWhenTheJobFails(t *testing.T) {
	t.Parallel()
	b := validBackup()
	b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "300s", MaxRetryTimes: 2, RetryTimeout: "1s"}
	deps, c := backupFixture(t, b, cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	_ = events(deps)
	failCurrentJob(t, deps)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	got := stored(t, deps, "bk")
	cond := condOf(got, v1alpha1.BackupFailed)
	if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != "BRFailed" ||
		!strings.HasPrefix(cond.Message, "br exited 1"+notRetried) || len(got.Status.BackoffRetryStatus) != 0 {
		t.Fatalf("Failed %+v retries %v, want the manager's reason, not retried", cond, got.Status.BackoffRetryStatus)
	}
	evs := events(deps)
	expectEvent(t, evs, "Warning BRFailed")
	if len(evs) != 1 {
		t.Fatalf("events %q, want one Warning", evs)
	}
	if err := c.sync(context.Background(), "ns/bk"); err != nil {
		t.Fatal(err)
	}
	expectNoWrites(t, deps)
	if evs := events(deps); len(evs) != 0 {
		t.Fatalf("a resync wrote events %q", evs)
	}
}
