package backupschedule

import (
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// retention is a schedule's garbage-collection policy.
type retention struct {
	// Reserved is maxReservedTime; when positive it is used and MaxBackups
	// is ignored, as in the TiDB Operator.
	Reserved time.Duration
	// MaxBackups keeps the newest N; 0 keeps all.
	MaxBackups int
}

// isZero reports a schedule without a policy: nothing is ever deleted.
func (r retention) isZero() bool { return r.Reserved <= 0 && r.MaxBackups <= 0 }

// retentionOf reads bs's policy; an unparsable maxReservedTime (which
// validation rejects first) counts as unset.
func retentionOf(bs *v1alpha1.BackupSchedule) retention {
	var r retention
	if s := bs.Spec.MaxReservedTime; s != nil {
		if d, err := time.ParseDuration(*s); err == nil && d > 0 {
			r.Reserved = d
		}
	}
	if m := bs.Spec.MaxBackups; m != nil && *m > 0 {
		r.MaxBackups = int(*m)
	}
	return r
}

// gcPlan is what one garbage collection deletes and keeps.
type gcPlan struct {
	// Delete and Keep partition the schedule's live snapshot Backups,
	// newest first.
	Delete, Keep []*v1alpha1.Backup
}

// planGC splits backups (bs's snapshot Backups not being deleted) by the
// policy r at now: with Reserved, those scheduled before now−Reserved go;
// otherwise all but the newest MaxBackups go. A Backup that has not
// finished (not Complete, Failed or Invalid) is never deleted, because its
// job may still be writing; it still counts towards MaxBackups. Pure; the
// order of backups does not matter.
func planGC(bs *v1alpha1.BackupSchedule, backups []*v1alpha1.Backup, r retention, now time.Time) gcPlan {
	sorted := slices.Clone(backups)
	slices.SortFunc(sorted, func(a, b *v1alpha1.Backup) int {
		if c := backupTime(bs, b).Compare(backupTime(bs, a)); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	})
	var plan gcPlan
	for i, b := range sorted {
		expired := false
		switch {
		case r.Reserved > 0:
			expired = backupTime(bs, b).Before(now.Add(-r.Reserved))
		case r.MaxBackups > 0:
			expired = i >= r.MaxBackups
		}
		if expired && isFinished(b) {
			plan.Delete = append(plan.Delete, b)
		} else {
			plan.Keep = append(plan.Keep, b)
		}
	}
	return plan
}

// backupTime is when b was scheduled: the time in its name, or, for a
// Backup not named by this schedule, its creation time.
func backupTime(bs *v1alpha1.BackupSchedule, b *v1alpha1.Backup) time.Time {
	if t, ok := scheduledTime(bs, b.Name); ok {
		return t
	}
	return b.CreationTimestamp.Time
}

// isFinished reports whether b's job is done: phase or a True condition
// Complete, Failed or Invalid.
func isFinished(b *v1alpha1.Backup) bool {
	return hasPhase(b, v1alpha1.BackupComplete) || hasPhase(b, v1alpha1.BackupFailed) || hasPhase(b, v1alpha1.BackupInvalid)
}

// isComplete reports whether b completed (phase or True condition).
func isComplete(b *v1alpha1.Backup) bool { return hasPhase(b, v1alpha1.BackupComplete) }

func hasPhase(b *v1alpha1.Backup, t v1alpha1.BackupConditionType) bool {
	if b.Status.Phase == t {
		return true
	}
	for _, c := range b.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// truncateUntil returns the commitTs of the oldest Complete Backup in kept,
// up to which the log backup is no longer needed: a point-in-time restore
// starts from a snapshot, so logs older than the oldest snapshot kept
// cannot be used. False when no kept Backup completed with a readable
// commitTs.
func truncateUntil(kept []*v1alpha1.Backup) (uint64, bool) {
	var min uint64
	found := false
	for _, b := range kept {
		if !isComplete(b) {
			continue
		}
		ts, ok := parseTS(b.Status.CommitTs)
		if ok && (!found || ts < min) {
			min, found = ts, true
		}
	}
	return min, found
}

// tsoPhysicalShift is the number of logical bits below the physical
// milliseconds in a TSO.
const tsoPhysicalShift = 18

// tsLayouts are the datetime forms BR accepts for a log truncation point.
var tsLayouts = []string{"2006-01-02 15:04:05-0700", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", time.RFC3339}

// parseTS reads a TSO ("443669038716944385") or a datetime as BR accepts it
// (a datetime without zone is UTC) as a TSO; false when it is neither.
func parseTS(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if ts, err := strconv.ParseUint(s, 10, 64); err == nil {
		return ts, true
	}
	for _, layout := range tsLayouts {
		if t, err := time.Parse(layout, s); err == nil && t.UnixMilli() >= 0 {
			return uint64(t.UnixMilli()) << tsoPhysicalShift, true
		}
	}
	return 0, false
}
