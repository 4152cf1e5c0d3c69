package backup

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Reasons of a failed pause or resume (v1.6's, its spelling kept).
const (
	ReasonPauseLogFailed  = "PauseLogBackupFailed"
	ReasonResumeLogFailed = "ResumeLogBackuFailed"
)

// pauseResumeDone reports whether sub already holds: the phase is Paused
// after log-pause, Running after log-resume.
func pauseResumeDone(b *v1alpha1.Backup, sub string) bool {
	if sub == logPause {
		return b.Status.Phase == condition.BackupPaused
	}
	return b.Status.Phase == v1alpha1.BackupRunning
}

// syncPauseResume runs log-pause or log-resume (sub) of a started log
// backup: the Job backup-<name>-log-<sub> once per request, the phase the
// backup-manager writes (Paused, Running) marking it done. A finished Job
// of an earlier request is deleted and replaced; a failed Job of this one
// leaves a False Failed condition for sub and the phase as it was.
func (c *backupControl) syncPauseResume(ctx context.Context, b, d *v1alpha1.Backup, tc *v1alpha1.TidbCluster, sub string) error {
	start, err := c.job(b.Namespace, LogJobName(b.Name, logStart))
	if err != nil {
		return err
	}
	if start == nil || !jobComplete(start) {
		return flow.RequeueAfter(waitDelay, "%s waits for the log backup to start", sub)
	}
	if pauseResumeDone(b, sub) {
		if err := c.syncTruncate(ctx, b, d, tc); err != nil {
			return err
		}
		return c.refreshCheckpoint(ctx, b, d, tc)
	}
	job, err := c.job(b.Namespace, LogJobName(b.Name, sub))
	switch {
	case err != nil:
		return err
	case job == nil:
		return c.createPauseResumeJob(ctx, b, d, tc, sub)
	case !jobFinished(job):
		return nil // its completion re-enqueues b
	case superseded(b, job, sub):
		if err := c.deleteJob(ctx, job); err != nil {
			return err
		}
		return flow.RequeueAfter(waitDelay, "the %s Job of an earlier request is being replaced", sub)
	}
	if f := jobFailed(job); f != nil {
		return c.pauseResumeFailed(ctx, b, sub, f.Message)
	}
	// Complete, but the backup-manager's write is not cached yet.
	return flow.RequeueAfter(waitDelay, "waiting for the status the %s Job wrote", sub)
}

// superseded reports whether finished Job of sub ran for an earlier
// request: the opposite subcommand completed after it did.
func superseded(b *v1alpha1.Backup, job *batchv1.Job, sub string) bool {
	opposite, typ := logResume, v1alpha1.BackupRunning
	if sub == logResume {
		opposite, typ = logPause, condition.BackupPaused
	}
	cond := condition.GetBackupCondition(&b.Status, typ)
	if cond == nil || cond.Command != v1alpha1.LogSubCommandType(opposite) {
		return false
	}
	done := jobFinishedAt(job)
	return done != nil && !cond.LastTransitionTime.Before(done)
}

// pauseResumeFailed records (once) the failure of sub as a False Failed
// condition carrying sub, when the backup-manager died without doing so.
func (c *backupControl) pauseResumeFailed(ctx context.Context, b *v1alpha1.Backup, sub, message string) error {
	if fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed); fc != nil && fc.Command == v1alpha1.LogSubCommandType(sub) {
		return nil
	}
	reason := ReasonPauseLogFailed
	if sub == logResume {
		reason = ReasonResumeLogFailed
	}
	_, wrote, err := c.setBackupConditions(ctx, b, v1alpha1.BackupCondition{Command: v1alpha1.LogSubCommandType(sub),
		Type: v1alpha1.BackupFailed, Status: corev1.ConditionFalse, Reason: reason, Message: message})
	if wrote {
		c.recorder.Eventf(b, corev1.EventTypeWarning, reason, "%s failed: %s", sub, message)
	}
	return err
}

// createPauseResumeJob creates the Job of sub with a Normal event and
// marks sub Scheduled in its own status only: the whole phase is the
// task's state (Complete, Running or Paused) until the backup-manager
// reports the new one.
func (c *backupControl) createPauseResumeJob(ctx context.Context, b, d *v1alpha1.Backup, tc *v1alpha1.TidbCluster, sub string) error {
	job := newLogJob(d, tc, c.image, sub)
	if err := c.createJob(ctx, job); err != nil {
		return c.createFailed(ctx, b, err)
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonJobCreated, "created Job %s (%s)", job.Name, sub)
	_, _, err := c.updateBackupStatus(ctx, b, func(st *v1alpha1.BackupStatus) bool {
		return condition.MarkSubCommandScheduled(st, v1alpha1.LogSubCommandType(sub), ReasonJobCreated, "Job "+job.Name+" created", c.now())
	})
	return err
}

// jobFinishedAt is when j completed or failed, nil while it runs.
func jobFinishedAt(j *batchv1.Job) *metav1.Time {
	for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed} {
		if jc := jobCondition(j, t); jc != nil {
			return &jc.LastTransitionTime
		}
	}
	return nil
}
