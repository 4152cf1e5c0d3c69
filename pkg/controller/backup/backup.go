package backup

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Event and condition reasons of the Backup and Restore steps.
const (
	ReasonJobCreated          = "JobCreated"
	ReasonCreateBackupJobFail = "CreateBackupJobFailed"
	ReasonCreateRestoreJobErr = "CreateRestoreJobFailed"
	ReasonClusterNotFound     = "GetTidbClusterFailed"
	ReasonJobFailed           = "JobFailed"
	ReasonRetryScheduled      = "RetryScheduled"
	ReasonRetryStarted        = "RetryStarted"
	ReasonRetryExhausted      = "BackoffRetryExhausted"
	ReasonPrepare             = "PrepareLogBackup"
	ReasonLogStopped          = "LogBackupStopped"
	ReasonCleanJobCreated     = "CleanJobCreated"
	ReasonCleanFailed         = "CleanFailed"
	ReasonFinalizerRemoved    = "FinalizerRemoved"
	ReasonUnsupported         = "Unsupported"
)

// backupRestart is the v1 condition type and phase of a snapshot backup
// whose failed Job is replaced by a new one under backoffRetryPolicy.
const backupRestart v1alpha1.BackupConditionType = "Restart"

// backupControl runs the steps of one valid Backup.
type backupControl struct{ *writer }

// defaulted returns a defaulted deep copy of b, for decisions only: it is
// never written back (status and finalizer writes start from b).
func defaulted(b *v1alpha1.Backup) *v1alpha1.Backup {
	d := b.DeepCopy()
	defaulting.SetBackupDefaults(d)
	return d
}

// needsFinalizer reports whether deleting b must wait for the controller:
// its data is cleaned (Delete, OnFailure) or its log backup stopped.
func needsFinalizer(d *v1alpha1.Backup) bool {
	return d.Spec.CleanPolicy == v1alpha1.CleanPolicyTypeDelete ||
		d.Spec.CleanPolicy == v1alpha1.CleanPolicyTypeOnFailure ||
		d.Spec.BackupMode == v1alpha1.BackupModeLog
}

// sync makes the world match valid Backup b: the finalizer first (so no
// Job runs without it), then the Job of b's mode. A finished backup (Complete,
// or Failed with no retry left) writes nothing.
func (c *backupControl) sync(ctx context.Context, b *v1alpha1.Backup) error {
	d := defaulted(b)
	b, err := c.setFinalizer(ctx, b, needsFinalizer(d) || hasFinalizer(b))
	if err != nil {
		return err
	}
	switch d.Spec.BackupMode {
	case v1alpha1.BackupModeLog:
		return c.syncLog(ctx, b, d)
	case v1alpha1.BackupModeVolumeSnapshot:
		return c.unsupported(ctx, b, "volume-snapshot backups (EBS) are not supported by this operator version")
	default:
		return c.syncSnapshot(ctx, b, d)
	}
}

// unsupported marks b Failed with reason Unsupported and records a Warning
// event once (when the condition is written); retrying cannot help.
func (c *backupControl) unsupported(ctx context.Context, b *v1alpha1.Backup, why string) error {
	_, wrote, err := c.setBackupConditions(ctx, b, backupCond(v1alpha1.BackupFailed, ReasonUnsupported, why))
	if err != nil {
		return err
	}
	if wrote {
		c.recorder.Event(b, corev1.EventTypeWarning, ReasonUnsupported, why)
	}
	return nil
}

// syncSnapshot runs a snapshot backup (or a dumpling export): a due retry
// first, then the Job of the current run, created when missing, its failure
// turned into a retry or Failed.
func (c *backupControl) syncSnapshot(ctx context.Context, b, d *v1alpha1.Backup) error {
	if condition.IsBackupComplete(b) {
		return nil
	}
	if p := pendingRetry(b.Status.BackoffRetryStatus); p != nil {
		return c.retryWhenDue(ctx, b, d, p)
	}
	job, err := c.job(b.Namespace, BackupJobName(b.Name))
	if err != nil {
		return err
	}
	run := realizedRetries(b.Status.BackoffRetryStatus)
	if job != nil && annotationInt(job, AnnRetryNum) != run {
		// The Job of an earlier run, not deleted yet (or a stale cache).
		if job.DeletionTimestamp == nil {
			if err := c.deleteJob(ctx, job); err != nil {
				return err
			}
		}
		return flow.RequeueAfter(waitDelay, "the Job of run %d is being replaced", annotationInt(job, AnnRetryNum))
	}
	if job == nil {
		if condition.IsBackupFailed(b) {
			return nil
		}
		return c.createBackupJob(ctx, b, d, run)
	}
	if f := jobFailed(job); f != nil {
		return c.onJobFailed(ctx, b, d, f.Reason, f.Message)
	}
	if condition.GetBackupCondition(&b.Status, v1alpha1.BackupScheduled) == nil && !condition.IsBackupTrue(b, v1alpha1.BackupRunning) {
		// An operator that stopped right after creating the Job never
		// recorded it: the Job is the record.
		_, _, err := c.setBackupConditions(ctx, b, backupCond(v1alpha1.BackupScheduled, ReasonJobCreated, "Job "+job.Name+" created"))
		return err
	}
	return nil
}

// createBackupJob creates the Job of run (0 first, n for the nth retry):
// Scheduled and a Normal event when it is created, RetryFailed
// (CreateBackupJobFailed) and a Warning event when the API refuses it.
func (c *backupControl) createBackupJob(ctx context.Context, b, d *v1alpha1.Backup, run int) error {
	var tc *v1alpha1.TidbCluster
	if d.Spec.BR != nil {
		var err error
		if tc, err = c.backupCluster(ctx, b, d); tc == nil || err != nil {
			return err
		}
	}
	job := newBackupJob(d, tc, c.image, run)
	if err := c.createJob(ctx, job); err != nil {
		return c.createFailed(ctx, b, err)
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonJobCreated, "created Job %s (%s)", job.Name, job.Spec.Template.Spec.Containers[0].Args[0])
	if d.Spec.BR == nil {
		c.warnScratchVolume(b, scratchVolumeIgnored(d.Spec.StorageClassName, d.Spec.StorageSize, d.Spec.VolumeAttributesClassName))
	}
	klog.FromContext(ctx).Info("backup job created", "backup", klog.KObj(b), "job", job.Name, "run", run)
	_, _, err := c.setBackupConditions(ctx, b, backupCond(v1alpha1.BackupScheduled, ReasonJobCreated, "Job "+job.Name+" created"))
	return err
}

// createFailed reports a refused Job create and returns the error to retry.
func (c *backupControl) createFailed(ctx context.Context, b *v1alpha1.Backup, cause error) error {
	c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonCreateBackupJobFail, "%v", cause)
	if _, _, err := c.setBackupConditions(ctx, b, backupCond(v1alpha1.BackupRetryFailed, ReasonCreateBackupJobFail, cause.Error())); err != nil {
		return fmt.Errorf("%w (after %w)", err, cause)
	}
	return cause
}

// backupCluster returns the TidbCluster d backs up. A missing cluster is
// reported by RetryFailed (GetTidbClusterFailed) and a Warning event when
// that condition is first written, and waited for.
func (c *backupControl) backupCluster(ctx context.Context, b, d *v1alpha1.Backup) (*v1alpha1.TidbCluster, error) {
	return c.clusterOrWait(b, b.Namespace, d.Spec.BR, "TidbCluster", func(msg string) (bool, error) {
		_, wrote, err := c.setBackupConditions(ctx, b, backupCond(v1alpha1.BackupRetryFailed, ReasonClusterNotFound, msg))
		return wrote, err
	})
}

// onJobFailed handles the failed Job of the current run: under
// backoffRetryPolicy a retry is recorded in status.backoffRetryStatus
// (phase Restart, Failed set False) and awaited; when no retry is left, or
// the backup is not retried, the backup is Failed — with the Job's reason
// when the backup-manager died without writing Failed itself.
func (c *backupControl) onJobFailed(ctx context.Context, b, d *v1alpha1.Backup, jobReason, jobMessage string) error {
	reason, message := jobFailure(jobReason, jobMessage)
	if fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed); fc != nil && fc.Status == corev1.ConditionTrue {
		reason, message = fc.Reason, fc.Message
	}
	giveUp := "backups of this mode are not retried"
	var rec *v1alpha1.BackoffRetryRecord
	if d.Spec.BackupMode == v1alpha1.BackupModeSnapshot {
		rec, giveUp = nextRetry(b.Status.BackoffRetryStatus, parseRetryPolicy(d.Spec.BackoffRetryPolicy), c.clock.Now(), reason+": "+message)
	}
	if rec == nil {
		return c.markFailed(ctx, b, reason, message, giveUp)
	}
	_, _, err := c.updateBackupStatus(ctx, b, func(st *v1alpha1.BackupStatus) bool {
		st.BackoffRetryStatus = append(st.BackoffRetryStatus, *rec)
		c.clearFailed(st)
		condition.SetBackupCondition(st, backupCond(backupRestart, ReasonRetryScheduled,
			fmt.Sprintf("retry %d due at %s", rec.RetryNum, rec.ExpectedRetryAt.UTC().Format("2006-01-02T15:04:05Z"))), c.now())
		return true
	})
	if err != nil {
		return err
	}
	c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonRetryScheduled, "backup failed (%s: %s); retry %d at %s",
		reason, message, rec.RetryNum, rec.ExpectedRetryAt.UTC().Format("2006-01-02T15:04:05Z"))
	return flow.RequeueAfter(rec.ExpectedRetryAt.Sub(c.clock.Now()), "retry %d of Backup %s is due later", rec.RetryNum, b.Name)
}

// clearFailed turns a True Failed condition False: the backup is retried.
func (c *backupControl) clearFailed(st *v1alpha1.BackupStatus) {
	if fc := condition.GetBackupCondition(st, v1alpha1.BackupFailed); fc != nil && fc.Status == corev1.ConditionTrue {
		condition.SetBackupCondition(st, v1alpha1.BackupCondition{Type: v1alpha1.BackupFailed, Status: corev1.ConditionFalse,
			Reason: ReasonRetryScheduled, Message: fc.Message}, c.now())
	}
}

// notRetried marks a Failed message the controller has reported: the
// backup-manager's own Failed (it writes no event) gets it appended, with
// why the backup is not retried, when the Job fails.
const notRetried = "; not retried: "

// markFailed makes b Failed (once), says why it is not retried and writes a
// Warning event — also when the backup-manager wrote Failed itself.
func (c *backupControl) markFailed(ctx context.Context, b *v1alpha1.Backup, reason, message, giveUp string) error {
	if fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed); fc != nil && fc.Status == corev1.ConditionTrue &&
		(fc.Reason == ReasonRetryExhausted || strings.Contains(fc.Message, notRetried)) {
		return nil // already reported
	}
	if len(b.Status.BackoffRetryStatus) > 0 {
		reason, message = ReasonRetryExhausted, message+"; "+giveUp
	} else {
		message += notRetried + giveUp
	}
	_, wrote, err := c.setBackupConditions(ctx, b, backupCond(v1alpha1.BackupFailed, reason, message))
	if err != nil {
		return err
	}
	if wrote {
		c.recorder.Eventf(b, corev1.EventTypeWarning, reason, "backup failed: %s", message)
	}
	return nil
}

// retryWhenDue waits for a recorded retry's expectedRetryAt (AddAfter, no
// polling), then deletes the failed Job, records realRetryAt (phase
// Restart) and creates the Job of the retry.
func (c *backupControl) retryWhenDue(ctx context.Context, b, d *v1alpha1.Backup, p *v1alpha1.BackoffRetryRecord) error {
	now := c.clock.Now()
	if p.ExpectedRetryAt != nil && now.Before(p.ExpectedRetryAt.Time) {
		return flow.RequeueAfter(p.ExpectedRetryAt.Sub(now), "retry %d of Backup %s is due at %s", p.RetryNum, b.Name, p.ExpectedRetryAt.UTC())
	}
	job, err := c.job(b.Namespace, BackupJobName(b.Name))
	if err != nil {
		return err
	}
	if job != nil {
		if err := c.deleteJob(ctx, job); err != nil {
			return err
		}
	}
	num := p.RetryNum
	b, _, err = c.updateBackupStatus(ctx, b, func(st *v1alpha1.BackupStatus) bool {
		at := c.now()
		st.BackoffRetryStatus[len(st.BackoffRetryStatus)-1].RealRetryAt = &at
		condition.SetBackupCondition(st, backupCond(backupRestart, ReasonRetryStarted, fmt.Sprintf("retry %d started", num)), at)
		return true
	})
	if err != nil {
		return err
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonRetryStarted, "retry %d: replacing the failed Job", num)
	return c.createBackupJob(ctx, b, d, realizedRetries(b.Status.BackoffRetryStatus))
}
