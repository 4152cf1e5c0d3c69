package backup

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// deletedBackup is a Backup with policy, its data at a path, status cond
// (if any), the finalizer, and a deletion timestamp.
func deletedBackup(policy v1alpha1.CleanPolicyType, conds ...v1alpha1.BackupCondition) *v1alpha1.Backup {
	b := validBackup()
	b.Spec.CleanPolicy = policy
	b.Finalizers = []string{Finalizer}
	now := metav1.Now()
	b.DeletionTimestamp = &now
	b.Status.BackupPath = "s3://b/bk"
	b.Status.Conditions = conds
	return b
}

func hasStoredFinalizer(t *testing.T, deps *controller.FakeDependencies) bool {
	t.Helper()
	return slices.Contains(stored(t, deps, "bk").Finalizers, Finalizer)
}

func TestDeletionWithoutCleaning(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		b    *v1alpha1.Backup
	}{
		{"Retain", deletedBackup(v1alpha1.CleanPolicyTypeRetain, backupCond(v1alpha1.BackupComplete, "", ""))},
		{"OnFailure of a complete backup", deletedBackup(v1alpha1.CleanPolicyTypeOnFailure, backupCond(v1alpha1.BackupComplete, "", ""))},
		{"Delete of a backup that wrote nothing", func() *v1alpha1.Backup {
			b := deletedBackup(v1alpha1.CleanPolicyTypeDelete)
			b.Status.BackupPath = ""
			return b
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deps, c := backupFixture(t, tc.b, cluster())
			if err := syncBackup(t, deps, c); err != nil {
				t.Fatal(err)
			}
			if hasStoredFinalizer(t, deps) || storedJob(t, deps, "clean-bk") != nil {
				t.Fatal("want the finalizer removed without a clean Job")
			}
			expectEvent(t, events(deps), "Normal FinalizerRemoved")
		})
	}
}

func TestDeletionCleansThenReleases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		b    *v1alpha1.Backup
	}{
		{"Delete", deletedBackup(v1alpha1.CleanPolicyTypeDelete, backupCond(v1alpha1.BackupComplete, "", ""))},
		{"OnFailure of a failed backup", deletedBackup(v1alpha1.CleanPolicyTypeOnFailure, backupCond(v1alpha1.BackupFailed, "BRFailed", ""))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deps, c := backupFixture(t, tc.b, cluster())
			if err := syncBackup(t, deps, c); err != nil {
				t.Fatal(err)
			}
			job := storedJob(t, deps, "clean-bk")
			if job == nil || !slices.Equal(job.Spec.Template.Spec.Containers[0].Args, []string{"clean", "--namespace=ns", "--backupName=bk"}) {
				t.Fatalf("clean Job %+v", job)
			}
			expectEvent(t, events(deps), "Normal CleanJobCreated")
			// The clean Job runs, and even once it completed the finalizer
			// stays until the backup-manager reports Clean.
			requeueAfter(t, syncBackup(t, deps, c))
			finishJob(t, deps, "clean-bk", batchv1.JobComplete, deps.FakeClock.Now())
			requeueAfter(t, syncBackup(t, deps, c))
			if !hasStoredFinalizer(t, deps) {
				t.Fatal("the finalizer went before the data was cleaned")
			}
			mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
				b.Status.Conditions = append(b.Status.Conditions, backupCond(v1alpha1.BackupClean, "", ""))
			})
			if err := syncBackup(t, deps, c); err != nil {
				t.Fatal(err)
			}
			if hasStoredFinalizer(t, deps) {
				t.Fatal("the finalizer stayed after Clean")
			}
		})
	}
}

func TestCleanFailedIsRetriedWithBackoff(t *testing.T) {
	t.Parallel()
	deps, c := backupFixture(t, deletedBackup(v1alpha1.CleanPolicyTypeDelete, backupCond(v1alpha1.BackupComplete, "", "")), cluster())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	events(deps)
	for attempt, backoff := range []time.Duration{30 * time.Second, time.Minute} {
		finishJob(t, deps, "clean-bk", batchv1.JobFailed, deps.FakeClock.Now())
		mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
			b.Status.Conditions = append(b.Status.Conditions, backupCond(v1alpha1.BackupCleanFailed, "DeleteFailed", "access denied"))
		})
		if d := requeueAfter(t, syncBackup(t, deps, c)); d != backoff {
			t.Fatalf("attempt %d: requeued after %s, want %s", attempt+1, d, backoff)
		}
		if !hasStoredFinalizer(t, deps) {
			t.Fatal("the finalizer went after CleanFailed")
		}
		deps.FakeClock.Step(backoff)
		if err := syncBackup(t, deps, c); err != nil {
			t.Fatal(err)
		}
		job := storedJob(t, deps, "clean-bk")
		if job == nil || jobFailed(job) != nil || annotationInt(job, AnnCleanAttempt) != attempt+2 {
			t.Fatalf("attempt %d: Job %+v, want a new clean Job", attempt+1, job)
		}
		evs := events(deps)
		expectEvent(t, evs, "Warning CleanFailed")
		expectEvent(t, evs, "Normal CleanJobCreated")
		mutateBackup(t, deps, "bk", func(b *v1alpha1.Backup) {
			b.Status.Conditions = slices.DeleteFunc(b.Status.Conditions, func(c v1alpha1.BackupCondition) bool {
				return c.Type == v1alpha1.BackupCleanFailed
			})
		})
	}
}

func TestDeletedLogBackupIsStoppedFirst(t *testing.T) {
	t.Parallel()
	b := deletedBackup(v1alpha1.CleanPolicyTypeRetain)
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	start := newLogJob(defaulted(b), cluster(), testImage, logStart)
	start.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}
	deps, c := backupFixture(t, b, cluster(), start)
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk-log-stop") == nil || !hasStoredFinalizer(t, deps) {
		t.Fatal("want the stop Job, and the finalizer kept while it runs")
	}
	finishJob(t, deps, "backup-bk-log-stop", batchv1.JobComplete, deps.FakeClock.Now())
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if hasStoredFinalizer(t, deps) || storedJob(t, deps, "clean-bk") != nil {
		t.Fatal("want the Retain log backup released after the stop, without cleaning")
	}
}

func TestDeletedLogBackupThatNeverStartedIsNotStopped(t *testing.T) {
	t.Parallel()
	b := deletedBackup(v1alpha1.CleanPolicyTypeRetain)
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	deps, c := backupFixture(t, b, cluster(), newLogJob(defaulted(b), cluster(), testImage, logStart))
	if err := syncBackup(t, deps, c); err != nil {
		t.Fatal(err)
	}
	if storedJob(t, deps, "backup-bk-log-stop") != nil || hasStoredFinalizer(t, deps) {
		t.Fatal("want the log backup whose start Job never completed released without a stop Job")
	}
}
