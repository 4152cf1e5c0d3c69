package backup

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// logSubcommand is the subcommand the spec of log backup d asks for, as
// v1.6 resolves it against b's phase: log-stop and log-pause as written;
// log-start resumes a Paused backup; no subcommand stops with spec.logStop
// or once Stopped, resumes a Paused backup, and starts otherwise (a
// truncation rides on a started log backup, see syncLog).
func logSubcommand(b, d *v1alpha1.Backup) string {
	paused := b.Status.Phase == condition.BackupPaused
	switch d.Spec.LogSubcommand {
	case "":
		switch {
		case d.Spec.LogStop || b.Status.Phase == v1alpha1.BackupStopped:
			return logStop
		case paused:
			return logResume
		}
		return logStart
	case logStart:
		if paused {
			return logResume
		}
		return logStart
	}
	return string(d.Spec.LogSubcommand)
}

// syncLog runs log backup b: the start Job once; then, while it is not
// stopped, a truncate Job per new spec.logTruncateUntil; and the stop Job
// once spec.logStop (or logSubcommand log-stop) asks for it. Each Job is
// preceded by the Prepare condition and followed by Scheduled, both with
// the subcommand as their command; a failed start or stop Job fails b.
// log-pause and log-resume run their own Jobs (syncPauseResume) and never
// fail b.
func (c *backupControl) syncLog(ctx context.Context, b, d *v1alpha1.Backup) error {
	tc, err := c.backupCluster(ctx, b, d)
	if tc == nil || err != nil {
		return err
	}
	switch sub := logSubcommand(b, d); sub {
	case logStart:
		start, err := c.runLogJob(ctx, b, d, tc, logStart)
		if err != nil || start == nil || !jobComplete(start) {
			return err
		}
		if err := c.syncTruncate(ctx, b, d, tc); err != nil {
			return err
		}
		return c.refreshCheckpoint(ctx, b, d, tc)
	case logStop:
		stop, err := c.runLogJob(ctx, b, d, tc, logStop)
		if err != nil || stop == nil || !jobComplete(stop) {
			return err
		}
		_, wrote, err := c.setBackupConditions(ctx, b, v1alpha1.BackupCondition{Command: logStop, Type: v1alpha1.BackupStopped,
			Status: corev1.ConditionTrue, Reason: ReasonLogStopped, Message: "log backup stopped"})
		if wrote {
			c.recorder.Event(b, corev1.EventTypeNormal, ReasonLogStopped, "log backup stopped")
		}
		return err
	case logPause, logResume:
		return c.syncPauseResume(ctx, b, d, tc, sub)
	default:
		return c.unsupported(ctx, b, fmt.Sprintf("log subcommand %s is not supported by this operator version", sub))
	}
}

// runLogJob returns the Job of subcommand, creating it when missing; a
// failed Job fails b (once). It returns nil while the Job was just created.
func (c *backupControl) runLogJob(ctx context.Context, b, d *v1alpha1.Backup, tc *v1alpha1.TidbCluster, sub string) (*batchv1.Job, error) {
	job, err := c.job(b.Namespace, LogJobName(b.Name, sub))
	if err == nil && job == nil {
		job, err = c.job(b.Namespace, legacyLogJobName(b.Name, sub))
	}
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, c.createLogJob(ctx, b, d, tc, sub)
	}
	if f := jobFailed(job); f != nil {
		reason, message := jobFailure(f.Reason, f.Message)
		if condition.IsBackupFailed(b) {
			return job, nil
		}
		_, wrote, err := c.setBackupConditions(ctx, b, v1alpha1.BackupCondition{Command: v1alpha1.LogSubCommandType(sub),
			Type: v1alpha1.BackupFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message})
		if wrote {
			c.recorder.Eventf(b, corev1.EventTypeWarning, reason, "%s failed: %s", sub, message)
		}
		return job, err
	}
	return job, nil
}

// createLogJob sets Prepare (with, for log-truncate, the TSO it truncates
// to as its logTruncatingUntil), creates the Job of sub, and sets Scheduled.
func (c *backupControl) createLogJob(ctx context.Context, b, d *v1alpha1.Backup, tc *v1alpha1.TidbCluster, sub string) error {
	cmd := v1alpha1.LogSubCommandType(sub)
	prepare := v1alpha1.BackupCondition{Command: cmd, Type: v1alpha1.BackupPrepare,
		Status: corev1.ConditionTrue, Reason: ReasonPrepare, Message: "creating the " + sub + " Job"}
	b, _, err := c.updateBackupStatus(ctx, b, func(st *v1alpha1.BackupStatus) bool {
		changed := condition.SetBackupCondition(st, prepare, c.now())
		if sub == logTruncate {
			changed = condition.SetLogTruncatingUntil(st, d.Spec.LogTruncateUntil) || changed
		}
		return changed
	})
	if err != nil {
		return err
	}
	job := newLogJob(d, tc, c.image, sub)
	if err := c.createJob(ctx, job); err != nil {
		return c.createFailed(ctx, b, err)
	}
	c.recorder.Eventf(b, corev1.EventTypeNormal, ReasonJobCreated, "created Job %s (%s)", job.Name, sub)
	_, _, err = c.setBackupConditions(ctx, b, v1alpha1.BackupCondition{Command: cmd, Type: v1alpha1.BackupScheduled,
		Status: corev1.ConditionTrue, Reason: ReasonJobCreated, Message: "Job " + job.Name + " created"})
	return err
}

// syncTruncate runs the truncate Job of spec.logTruncateUntil once the log
// backup started: a finished Job for an older TSO is replaced, a running
// one is waited for, and nothing runs when the backup-manager reports that
// TSO truncated already.
func (c *backupControl) syncTruncate(ctx context.Context, b, d *v1alpha1.Backup, tc *v1alpha1.TidbCluster) error {
	until := d.Spec.LogTruncateUntil
	if until == "" || until == b.Status.LogSuccessTruncateUntil {
		return nil
	}
	job, err := c.job(b.Namespace, LogJobName(b.Name, logTruncate))
	if err != nil {
		return err
	}
	switch {
	case job == nil:
		return c.createLogJob(ctx, b, d, tc, logTruncate)
	case job.Annotations[AnnTruncateUntil] == until:
		if f := jobFailed(job); f != nil {
			_, wrote, err := c.setBackupConditions(ctx, b, v1alpha1.BackupCondition{Command: logTruncate,
				Type: v1alpha1.BackupFailed, Status: corev1.ConditionFalse, Reason: ReasonJobFailed, Message: "truncating to " + until + " failed: " + f.Message})
			if wrote {
				c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonJobFailed, "truncating the log backup to %s failed: %s", until, f.Message)
			}
			return err
		}
		return nil
	case !jobFinished(job):
		return flow.RequeueAfter(waitDelay, "truncation to %s waits for the running truncate Job", until)
	default:
		if err := c.deleteJob(ctx, job); err != nil {
			return err
		}
		return flow.RequeueAfter(waitDelay, "the truncate Job of %s is being replaced for %s", job.Annotations[AnnTruncateUntil], until)
	}
}

// legacyLogJobName is the name earlier versions of this operator gave the
// Job of a start, stop or truncate (backup-<name>-start …): a log backup
// started by one is not started again after an upgrade.
func legacyLogJobName(backup, subcommand string) string {
	return "backup-" + backup + "-" + strings.TrimPrefix(subcommand, "log-")
}
