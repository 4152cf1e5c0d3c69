package backupschedule

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ReasonCompactionIdle says compactBackupTemplate is set but a field log
// compaction needs (logBackupTemplate, compactInterval) is not, so no
// CompactBackup is created.
const ReasonCompactionIdle = "CompactionIdle"

// compactSpan is how many compactIntervals one CompactBackup covers at most
// while catching up, as in the TiDB Operator.
const compactSpan = 3

// missingForCompaction names the fields log compaction needs that bs
// lacks while it has a compactBackupTemplate; empty when it has them all,
// or has no template.
func missingForCompaction(bs *v1alpha1.BackupSchedule) []string {
	if bs.Spec.CompactBackupTemplate == nil {
		return nil
	}
	var missing []string
	if bs.Spec.LogBackupTemplate == nil {
		missing = append(missing, "spec.logBackupTemplate")
	}
	if bs.Spec.CompactInterval == nil {
		missing = append(missing, "spec.compactInterval")
	}
	return missing
}

// reportCompactionIdle warns, once per generation, that bs's compaction
// template is not used because fields it needs are missing.
func (c *Control) reportCompactionIdle(bs *v1alpha1.BackupSchedule) {
	missing := missingForCompaction(bs)
	if len(missing) == 0 {
		c.reports.clear(bs, ReasonCompactionIdle)
		return
	}
	c.reports.once(bs, corev1.EventTypeWarning, ReasonCompactionIdle,
		"spec.compactBackupTemplate is set without "+strings.Join(missing, " and ")+": no CompactBackup is created")
}

// syncCompact creates the schedule's next CompactBackup (spec
// compact-backup.md §8) when compaction is configured, the log backup has a
// checkpoint past its start, the last CompactBackup finished (one runs at a
// time; its end, or a failed one's start, becomes lastCompactProgress) and
// compactWindow finds a range due. A range due later asks for a wake-up
// then; a running CompactBackup or an advancing checkpoint wakes the
// schedule through its informer.
func (c *Control) syncCompact(ctx context.Context, s *syncState) error {
	bs := s.bs
	if bs.Spec.CompactBackupTemplate == nil || len(missingForCompaction(bs)) > 0 || s.status.LogBackup == nil {
		return nil
	}
	template, err := bs.Spec.CompactTemplate()
	if err != nil {
		return flow.Ignore(err) // validation refused it first
	}
	span, err := time.ParseDuration(*bs.Spec.CompactInterval)
	if err != nil || span <= 0 {
		return flow.Ignore(fmt.Errorf("compactInterval %q: %w", *bs.Spec.CompactInterval, err))
	}
	lb, err := c.backups.Backups(bs.Namespace).Get(*s.status.LogBackup)
	if apierrors.IsNotFound(err) {
		return nil // created a moment ago: its update wakes the schedule
	}
	if err != nil {
		return fmt.Errorf("get log Backup %s/%s: %w", bs.Namespace, *s.status.LogBackup, err)
	}
	checkpoint, ok := logCheckpoint(lb)
	if !ok {
		return nil
	}
	if s.status.LogBackupStartTs == nil {
		// A log backup from before logBackupStartTs was recorded.
		s.status.LogBackupStartTs = &metav1.Time{Time: checkpoint}
	}
	if done, err := c.lastCompactDone(ctx, s); err != nil || !done {
		return err
	}
	w := compactWindow(s.status, bs.Spec.MinCompactStartTs, checkpoint, span, s.now)
	if w.Skip != "" {
		klog.FromContext(ctx).V(2).Info("no compaction due", "backupSchedule", klog.KObj(bs), "why", w.Skip)
		s.wakeAt(w.Wake)
		return nil
	}
	if behind, err := c.statusBehind(ctx, bs); err != nil || behind {
		return err
	}
	return c.createCompact(ctx, s, newCompactBackup(bs, template, lb, w, s.now))
}

// statusBehind reports whether the API server's copy of bs records another
// last compaction than the cached bs: the cache has not seen the status
// write of the sync that created it. A CompactBackup is named by the time
// it is created, so creating from a stale status would start a second one
// (the status update wakes the schedule again). One GET per compaction.
func (c *Control) statusBehind(ctx context.Context, bs *v1alpha1.BackupSchedule) (bool, error) {
	live, err := c.client.PingcapV1alpha1().BackupSchedules(bs.Namespace).Get(ctx, bs.Name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("get BackupSchedule %s/%s: %w", bs.Namespace, bs.Name, err)
	}
	behind := live.Status.LastCompact != bs.Status.LastCompact
	if behind {
		klog.FromContext(ctx).V(2).Info("cached status behind, compaction decided on the next sync", "backupSchedule", klog.KObj(bs),
			"cached", bs.Status.LastCompact, "live", live.Status.LastCompact)
	}
	return behind, nil
}

// logCheckpoint reads lb's status.logCheckpointTs as a time; false when it
// is unset, zero or unreadable.
func logCheckpoint(lb *v1alpha1.Backup) (time.Time, bool) {
	ts, err := v1alpha1.ParseTSO(lb.Status.LogCheckpointTs)
	if err != nil || ts == 0 {
		return time.Time{}, false
	}
	return tsoTime(ts), true
}

// tsoTime is the physical time of a TSO.
func tsoTime(ts uint64) time.Time {
	return time.UnixMilli(int64(ts >> v1alpha1.TSOPhysicalShift)).UTC()
}

// compactRange is one compaction compactWindow decided, or why none is due.
type compactRange struct {
	Start, End time.Time
	// Skip says why no compaction is due; empty when one is.
	Skip string
	// Wake is when the skipped compaction becomes due by time alone; zero
	// when only an advancing checkpoint can make it due.
	Wake time.Time
}

// compactWindow decides the next compaction's range from st (log start,
// progress, last execution), minCompactStartTs (already validated), the
// log checkpoint, compactInterval span and now: it starts at the progress
// (else the log start, or minStart when later), ends at the checkpoint but
// covers at most compactSpan intervals, and is due only when the log backup
// has run for a span and the last compaction was created a span ago. Pure.
func compactWindow(st *v1alpha1.BackupScheduleStatus, minStart string, checkpoint time.Time, span time.Duration,
	now time.Time) compactRange {
	logStart := st.LogBackupStartTs.Time
	r := compactRange{Start: logStart}
	if st.LastCompactProgress != nil {
		r.Start = st.LastCompactProgress.Time
	}
	if ts, err := v1alpha1.ParseTSO(minStart); minStart != "" && err == nil && tsoTime(ts).After(r.Start) {
		r.Start = tsoTime(ts)
	}
	if !r.Start.Before(checkpoint) {
		r.Skip = "the log checkpoint is not past the compaction progress"
		return r
	}
	r.End = checkpoint
	if limit := r.Start.Add(compactSpan * span); limit.Before(checkpoint) {
		r.End = limit
	}
	if r.End.Sub(logStart) < span {
		r.Skip = "the log backup started less than compactInterval ago"
		return r
	}
	if last := st.LastCompactExecutionTs; last != nil && now.Sub(last.Time) < span {
		r.Skip, r.Wake = "the last compaction was created less than compactInterval ago", last.Add(span)
	}
	return r
}

// lastCompactDone reports whether status.lastCompact finished (or is gone),
// so that the next may be created, and moves lastCompactProgress to its
// end (Complete) or start (Failed: the range is compacted again), never
// backwards or before the log start.
func (c *Control) lastCompactDone(ctx context.Context, s *syncState) (bool, error) {
	name := s.status.LastCompact
	if name == "" {
		return true, nil
	}
	cb, err := c.compacts.CompactBackups(s.bs.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		cb, err = c.client.PingcapV1alpha1().CompactBackups(s.bs.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get last CompactBackup %s/%s: %w", s.bs.Namespace, name, err)
	}
	var progress string
	switch cb.Status.State {
	case v1alpha1.CompactComplete:
		progress = cb.Status.EndTs
	case v1alpha1.CompactFailed:
		progress = cb.Spec.StartTs
	default:
		return false, nil // its update wakes the schedule
	}
	ts, err := v1alpha1.ParseTSO(progress)
	t := tsoTime(ts)
	if err != nil || ts == 0 || t.Before(s.status.LogBackupStartTs.Time) ||
		(s.status.LastCompactProgress != nil && t.Before(s.status.LastCompactProgress.Time)) {
		klog.FromContext(ctx).Info("compaction progress not moved back", "backupSchedule", klog.KObj(s.bs),
			"compactBackup", name, "progress", progress)
		return true, nil
	}
	s.status.LastCompactProgress = &metav1.Time{Time: t}
	return true, nil
}

// createCompact creates cb, or adopts a CompactBackup of that name bs
// controls (created by a sync that could not record it), and records it as
// lastCompact, created now.
func (c *Control) createCompact(ctx context.Context, s *syncState, cb *v1alpha1.CompactBackup) error {
	err := c.writes.createCompact(ctx, s.bs, cb)
	switch {
	case apierrors.IsAlreadyExists(err):
		existing, err := c.client.PingcapV1alpha1().CompactBackups(cb.Namespace).Get(ctx, cb.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get existing CompactBackup %s/%s: %w", cb.Namespace, cb.Name, err)
		}
		if ref := metav1.GetControllerOf(existing); ref == nil || ref.UID != s.bs.UID {
			return fmt.Errorf("CompactBackup %s/%s exists and is not controlled by BackupSchedule %s", cb.Namespace, cb.Name, s.bs.Name)
		}
	case apierrors.IsInvalid(err):
		return flow.Ignore(fmt.Errorf("create CompactBackup %s/%s: %w", cb.Namespace, cb.Name, err))
	case err != nil:
		return fmt.Errorf("create CompactBackup %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	s.status.LastCompact = cb.Name
	s.status.LastCompactExecutionTs = &metav1.Time{Time: s.now.Truncate(time.Second)}
	klog.FromContext(ctx).Info("compaction created", "backupSchedule", klog.KObj(s.bs), "compactBackup", cb.Name,
		"startTs", cb.Spec.StartTs, "endTs", cb.Spec.EndTs)
	return nil
}
