package backup

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
)

// restoreControl runs the steps of one valid Restore.
type restoreControl struct {
	*writer
	sets appslisters.StatefulSetLister // TiKV's, for the PiTR overlay's rollout
}

// sync runs valid Restore r once: against an existing target TidbCluster
// (BR), the Job restore-<name> is created (Scheduled; RetryFailed with
// CreateRestoreJobFailed when refused) — for a PiTR restore only once TiKV
// runs with the GC overlay (holdGCOverlay), which is released when r is
// Complete or Failed; a Job that failed while the backup-manager wrote
// neither Complete nor Failed fails r. A restore is never run twice: once
// Scheduled, a missing Job is not recreated.
func (c *restoreControl) sync(ctx context.Context, r *v1alpha1.Restore) error {
	if condition.IsRestoreComplete(r) || condition.IsRestoreFailed(r) {
		return c.releaseGCOverlay(ctx, r)
	}
	d := r.DeepCopy()
	defaulting.SetRestoreDefaults(d)
	var tc *v1alpha1.TidbCluster
	if d.Spec.BR != nil {
		var err error
		if tc, err = c.restoreCluster(ctx, r, d); tc == nil || err != nil {
			return err
		}
	}
	if d.Spec.Mode == v1alpha1.RestoreModeVolumeSnapshot {
		return c.fail(ctx, r, ReasonUnsupported, "volume-snapshot restores (EBS) are not supported by this operator version")
	}
	job, err := c.job(r.Namespace, RestoreJobName(r.Name))
	if err != nil {
		return err
	}
	if job == nil {
		if condition.IsRestoreScheduled(r) {
			return nil
		}
		if d.Spec.Mode == v1alpha1.RestoreModePiTR && tc != nil {
			if err := c.holdGCOverlay(ctx, r, tc); err != nil {
				return err
			}
		}
		return c.createRestoreJob(ctx, r, d, tc)
	}
	if f := jobFailed(job); f != nil {
		reason, message := jobFailure(f.Reason, f.Message)
		return c.fail(ctx, r, reason, message)
	}
	return nil
}

// restoreCluster returns the target TidbCluster of d; a missing one is
// reported by RetryFailed (GetTidbClusterFailed) and a Warning event when
// that condition is first written, and waited for.
func (c *restoreControl) restoreCluster(ctx context.Context, r, d *v1alpha1.Restore) (*v1alpha1.TidbCluster, error) {
	return c.clusterOrWait(r, r.Namespace, d.Spec.BR, "target TidbCluster", func(msg string) (bool, error) {
		_, wrote, err := c.setRestoreConditions(ctx, r, restoreCond(v1alpha1.RestoreRetryFailed, ReasonClusterNotFound, msg))
		return wrote, err
	})
}

// createRestoreJob creates restore-<name> and reports it.
func (c *restoreControl) createRestoreJob(ctx context.Context, r, d *v1alpha1.Restore, tc *v1alpha1.TidbCluster) error {
	job := newRestoreJob(d, tc, c.image)
	if err := c.createJob(ctx, job); err != nil {
		c.recorder.Eventf(r, corev1.EventTypeWarning, ReasonCreateRestoreJobErr, "%v", err)
		if _, _, werr := c.setRestoreConditions(ctx, r, restoreCond(v1alpha1.RestoreRetryFailed, ReasonCreateRestoreJobErr, err.Error())); werr != nil {
			return fmt.Errorf("%w (after %w)", werr, err)
		}
		return err
	}
	if d.Spec.BR == nil {
		c.warnScratchVolume(r, scratchVolumeIgnored(d.Spec.StorageClassName, d.Spec.StorageSize, d.Spec.VolumeAttributesClassName))
	}
	c.recorder.Eventf(r, corev1.EventTypeNormal, ReasonJobCreated, "created Job %s (%s)", job.Name, job.Spec.Template.Spec.Containers[0].Args[0])
	klog.FromContext(ctx).Info("restore job created", "restore", klog.KObj(r), "job", job.Name)
	_, _, err := c.setRestoreConditions(ctx, r, restoreCond(v1alpha1.RestoreScheduled, ReasonJobCreated, "Job "+job.Name+" created"))
	return err
}

// fail makes r Failed (once) with a Warning event.
func (c *restoreControl) fail(ctx context.Context, r *v1alpha1.Restore, reason, message string) error {
	_, wrote, err := c.setRestoreConditions(ctx, r, restoreCond(v1alpha1.RestoreFailed, reason, message))
	if wrote {
		c.recorder.Eventf(r, corev1.EventTypeWarning, reason, "restore failed: %s", message)
	}
	return err
}
