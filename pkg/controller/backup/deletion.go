package backup

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Backoff of the clean Jobs of a deleted Backup: 30s after the first
// failure, doubling, at most 10 minutes.
const (
	cleanBackoffBase = 30 * time.Second
	cleanBackoffMax  = 10 * time.Minute
)

func hasFinalizer(b *v1alpha1.Backup) bool { return slices.Contains(b.Finalizers, Finalizer) }

// shouldClean reports whether deleting d deletes its data: Delete always,
// OnFailure when the backup failed; never Retain.
func shouldClean(d *v1alpha1.Backup) bool {
	switch d.Spec.CleanPolicy {
	case v1alpha1.CleanPolicyTypeDelete:
		return true
	case v1alpha1.CleanPolicyTypeOnFailure:
		return condition.IsBackupFailed(d)
	default:
		return false
	}
}

// delete syncs a Backup being deleted that holds the finalizer: a log
// backup is stopped first; then, when the policy cleans and there is data,
// the clean Job runs (retried with backoff after a failure) until the
// backup-manager reports Clean; only then, or when nothing is to be
// cleaned, the finalizer goes.
func (c *backupControl) delete(ctx context.Context, b *v1alpha1.Backup) error {
	if !hasFinalizer(b) {
		return nil
	}
	d := defaulted(b)
	if d.Spec.BackupMode == v1alpha1.BackupModeLog {
		if stopped, err := c.stopForDeletion(ctx, b, d); !stopped || err != nil {
			return err
		}
	}
	switch {
	case !shouldClean(d):
		return c.release(ctx, b, fmt.Sprintf("cleanPolicy %s keeps the data", d.Spec.CleanPolicy))
	case condition.IsBackupClean(b):
		return c.release(ctx, b, "the data is cleaned")
	case b.Status.BackupPath == "":
		return c.release(ctx, b, "the backup wrote no data (no status.backupPath): nothing to clean")
	}
	job, err := c.job(b.Namespace, CleanJobName(b.Name))
	if err != nil {
		return err
	}
	if job == nil {
		return c.createCleanJob(ctx, b, d, 1)
	}
	if f := jobFailed(job); f != nil || (jobComplete(job) && condition.IsBackupCleanFailed(b)) {
		return c.retryClean(ctx, b, d, job)
	}
	return flow.RequeueAfter(waitDelay, "the clean Job %s has not reported Clean yet", job.Name)
}

// stopForDeletion stops a log backup that is being deleted and reports
// whether it is stopped: its start Job never completed, it is Stopped, or
// its stop Job finished.
func (c *backupControl) stopForDeletion(ctx context.Context, b, d *v1alpha1.Backup) (bool, error) {
	if condition.IsBackupTrue(b, v1alpha1.BackupStopped) {
		return true, nil
	}
	start, err := c.job(b.Namespace, LogJobName(b.Name, logStart))
	if err != nil {
		return false, err
	}
	if start == nil || !jobComplete(start) {
		// The log task never started (or its start Job is still going and
		// is deleted with the Backup): there is nothing to stop.
		return true, nil
	}
	stop, err := c.job(b.Namespace, LogJobName(b.Name, logStop))
	if err != nil {
		return false, err
	}
	if stop != nil {
		if f := jobFailed(stop); f != nil {
			c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonJobFailed, "stopping the deleted log backup failed (%s); going on with its deletion", f.Message)
		}
		return jobFinished(stop), nil
	}
	tc, err := c.backupCluster(ctx, b, d)
	if tc == nil || err != nil {
		return false, err
	}
	job := newLogJob(d, tc, c.image, logStop)
	if err := c.createJob(ctx, job); err != nil {
		return false, err
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonJobCreated, "created Job %s to stop the deleted log backup", job.Name)
	return false, nil
}

// createCleanJob creates clean-<name> (the attempt-th).
func (c *backupControl) createCleanJob(ctx context.Context, b, d *v1alpha1.Backup, attempt int) error {
	job := newCleanJob(d, c.image, attempt)
	if err := c.createJob(ctx, job); err != nil {
		c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonCleanFailed, "%v", err)
		return err
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonCleanJobCreated, "created Job %s (attempt %d) to delete %s", job.Name, attempt, b.Status.BackupPath)
	return nil
}

// retryClean replaces a failed clean Job once its backoff passed, and
// waits (AddAfter) until then.
func (c *backupControl) retryClean(ctx context.Context, b, d *v1alpha1.Backup, job *batchv1.Job) error {
	attempt := max(annotationInt(job, AnnCleanAttempt), 1)
	failedAt := job.CreationTimestamp.Time
	if f := jobCondition(job, batchv1.JobFailed); f != nil {
		failedAt = f.LastTransitionTime.Time
	} else if f := jobCondition(job, batchv1.JobComplete); f != nil {
		failedAt = f.LastTransitionTime.Time
	}
	due := failedAt.Add(cleanBackoff(attempt))
	if now := c.clock.Now(); now.Before(due) {
		return flow.RequeueAfter(due.Sub(now), "clean attempt %d failed; the next is due at %s", attempt, due.UTC())
	}
	msg := "the clean Job failed"
	if cf := condition.GetBackupCondition(&b.Status, v1alpha1.BackupCleanFailed); cf != nil && cf.Message != "" {
		msg = cf.Message
	}
	c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonCleanFailed, "clean attempt %d failed (%s); retrying", attempt, msg)
	if err := c.deleteJob(ctx, job); err != nil {
		return err
	}
	return c.createCleanJob(ctx, b, d, attempt+1)
}

// cleanBackoff is the wait after the attempt-th failed clean Job.
func cleanBackoff(attempt int) time.Duration {
	d := cleanBackoffBase
	for i := 1; i < attempt && d < cleanBackoffMax; i++ {
		d *= 2
	}
	return min(d, cleanBackoffMax)
}

// release removes the finalizer, saying why.
func (c *backupControl) release(ctx context.Context, b *v1alpha1.Backup, why string) error {
	if _, err := c.setFinalizer(ctx, b, false); err != nil {
		return err
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonFinalizerRemoved, "finalizer %s removed: %s", Finalizer, why)
	return nil
}
