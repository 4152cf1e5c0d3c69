package backupschedule

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// collectGarbage deletes the snapshot Backups bs's retention no longer
// keeps (planGC), resets status.lastBackup when it deleted every one, asks
// to be woken when the next kept Backup expires, and truncates the log
// backup up to the oldest snapshot kept. A schedule without maxReservedTime
// or maxBackups keeps everything and writes nothing.
func (c *Control) collectGarbage(ctx context.Context, s *syncState) error {
	r := retentionOf(s.bs)
	if r.isZero() {
		return nil
	}
	backups, err := c.snapshotBackups(s.bs)
	if err != nil {
		return err
	}
	if s.created != nil && !containsName(backups, s.created.Name) {
		backups = append(backups, s.created)
	}
	plan := planGC(s.bs, backups, r, s.now)
	var errs []error
	for _, b := range plan.Delete {
		errs = append(errs, c.writes.deleteBackup(ctx, s.bs, b, r.why()))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(plan.Delete) > 0 && len(plan.Keep) == 0 {
		// Every Backup is gone: the next one is scheduled from now on, not
		// from the deleted Backup's time.
		s.status.LastBackup = ""
		s.status.LastBackupTime = nil
		s.status.AllBackupCleanTime = &metav1.Time{Time: s.now.Truncate(time.Second)}
	}
	if r.Reserved > 0 {
		for _, b := range plan.Keep {
			// An expired Backup still running is kept without a wake-up:
			// its own update wakes the schedule when it finishes.
			if expiry := backupTime(s.bs, b).Add(r.Reserved).Add(time.Second); expiry.After(s.now) {
				s.wakeAt(expiry)
			}
		}
	}
	return c.truncateLogBackup(ctx, s, plan.Keep)
}

// why says in the deletion event which policy deleted a Backup.
func (r retention) why() string {
	if r.Reserved > 0 {
		return "older than maxReservedTime " + r.Reserved.String()
	}
	return "beyond maxBackups " + strconv.Itoa(r.MaxBackups)
}

// truncateLogBackup moves the log backup's spec.logTruncateUntil forward to
// the commitTs of the oldest Complete snapshot in kept, capped, when the
// schedule compacts, by lastCompactProgress. It never moves it back, and leaves a value it cannot read (neither TSO nor datetime) alone.
func (c *Control) truncateLogBackup(ctx context.Context, s *syncState, kept []*v1alpha1.Backup) error {
	if s.status.LogBackup == nil {
		return nil
	}
	until, ok := truncateUntil(kept)
	if !ok {
		return nil
	}
	if s.bs.Spec.CompactBackupTemplate != nil {
		// Logs not compacted yet are kept: no truncation before the first
		// compaction completes, and none past its progress.
		if s.status.LastCompactProgress == nil {
			return nil
		}
		until = min(until, uint64(s.status.LastCompactProgress.UnixMilli())<<v1alpha1.TSOPhysicalShift)
	}
	lb, err := c.backups.Backups(s.bs.Namespace).Get(*s.status.LogBackup)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get log Backup %s/%s: %w", s.bs.Namespace, *s.status.LogBackup, err)
	}
	if lb.DeletionTimestamp != nil {
		return nil
	}
	if cur := lb.Spec.LogTruncateUntil; cur != "" {
		curTS, readable := parseTS(cur)
		if !readable || curTS >= until {
			klog.FromContext(ctx).V(4).Info("log backup truncation not moved", "backup", klog.KObj(lb),
				"current", cur, "oldestKept", until)
			return nil
		}
	}
	return c.writes.truncateLog(ctx, s.bs, lb, until)
}

func containsName(backups []*v1alpha1.Backup, name string) bool {
	for _, b := range backups {
		if b.Name == name {
			return true
		}
	}
	return false
}
