package backup

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// logStatus is the backup-manager subcommand that refreshes
// status.logCheckpointTs from `br log status`.
const logStatus = "log-status"

// checkpointPeriod is how often a running log backup's checkpoint is
// refreshed. v1.6's tracker reads it from PD's etcd every minute; here each
// refresh is a short Job (no etcd client in the operator), so it runs
// every 5 minutes and the checkpoint in status lags by at most that.
const checkpointPeriod = 5 * time.Minute

// refreshCheckpoint keeps status.logCheckpointTs (and timeSynced) of a
// running log backup current: the Job backup-<name>-log-status (`br log
// status`) runs once a checkpointPeriod, its finished predecessor deleted
// first. The backup-manager writes both; the controller writes no status
// here. A paused or stopped backup is not refreshed.
func (c *backupControl) refreshCheckpoint(ctx context.Context, b, d *v1alpha1.Backup, tc *v1alpha1.TidbCluster) error {
	if b.Status.Phase == v1alpha1.BackupStopped || pauseResumeDone(b, logPause) {
		return nil
	}
	job, err := c.job(b.Namespace, LogJobName(b.Name, logStatus))
	switch {
	case err != nil:
		return err
	case job == nil:
		j := newLogJob(d, tc, c.image, logStatus)
		if err := c.createJob(ctx, j); err != nil {
			c.recorder.Eventf(b, corev1.EventTypeWarning, ReasonCreateBackupJobFail, "%v", err)
			return err
		}
		return nil // its completion re-enqueues b
	case !jobFinished(job):
		return nil
	}
	if at := jobFinishedAt(job); at != nil {
		if wait := at.Add(checkpointPeriod).Sub(c.clock.Now()); wait > 0 {
			return flow.RequeueAfter(wait, "the checkpoint of %s is refreshed again in %s", b.Name, wait.Round(time.Second))
		}
	}
	if err := c.deleteJob(ctx, job); err != nil {
		return err
	}
	return flow.RequeueAfter(time.Second, "the log-status Job of %s is being replaced", b.Name)
}
