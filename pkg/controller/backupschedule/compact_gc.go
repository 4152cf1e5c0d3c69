package backupschedule

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// collectCompactions deletes the CompactBackups bs's retention no longer
// keeps (planCompactGC), resets status.lastCompact when it deleted every
// one, and, under maxReservedTime, asks to be woken when the oldest kept
// finished one expires. Deleting a CompactBackup deletes its Job (owner
// reference); the compacted files stay, as in the TiDB Operator.
func (c *Control) collectCompactions(ctx context.Context, s *syncState) error {
	r := retentionOf(s.bs)
	if r.isZero() {
		return nil
	}
	cbs, err := c.scheduleCompactions(s.bs)
	if err != nil || len(cbs) == 0 {
		return err
	}
	plan := planCompactGC(cbs, r, s.now)
	var errs []error
	for _, cb := range plan.Delete {
		errs = append(errs, c.writes.deleteCompact(ctx, s.bs, cb, r.why()))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(plan.Delete) > 0 && len(plan.Keep) == 0 {
		s.status.LastCompact = ""
	}
	if r.Reserved > 0 && len(plan.Keep) > 0 && isCompactFinished(plan.Keep[0]) {
		if end, ok := compactEnd(plan.Keep[0]); ok {
			s.wakeAt(end.Add(r.Reserved).Add(time.Second))
		}
	}
	return nil
}

// scheduleCompactions lists from the cache bs's CompactBackups not being
// deleted and not controlled by another object.
func (c *Control) scheduleCompactions(bs *v1alpha1.BackupSchedule) ([]*v1alpha1.CompactBackup, error) {
	sel := labels.SelectorFromSet(labels.Set{ScheduleLabelKey: bs.Name})
	all, err := c.compacts.CompactBackups(bs.Namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list CompactBackups of BackupSchedule %s/%s: %w", bs.Namespace, bs.Name, err)
	}
	var out []*v1alpha1.CompactBackup
	for _, cb := range all {
		if ref := metav1.GetControllerOf(cb); cb.DeletionTimestamp == nil && (ref == nil || ref.UID == bs.UID) {
			out = append(out, cb)
		}
	}
	return out, nil
}

// compactPlan partitions a schedule's CompactBackups, oldest first.
type compactPlan struct {
	Delete, Keep []*v1alpha1.CompactBackup
}

// planCompactGC splits cbs by r at now, oldest (creation, then name)
// first: with Reserved, the leading run of finished (Complete or Failed)
// ones whose spec.endTs is before now−Reserved goes, up to the first other;
// otherwise all but the newest MaxBackups go, unless still running. Pure.
func planCompactGC(cbs []*v1alpha1.CompactBackup, r retention, now time.Time) compactPlan {
	sorted := slices.Clone(cbs)
	slices.SortFunc(sorted, func(a, b *v1alpha1.CompactBackup) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var plan compactPlan
	leading := true
	for i, cb := range sorted {
		expired := false
		switch {
		case r.Reserved > 0:
			end, ok := compactEnd(cb)
			expired = leading && ok && end.Before(now.Add(-r.Reserved))
			leading = expired && isCompactFinished(cb)
		case r.MaxBackups > 0:
			expired = i < len(sorted)-r.MaxBackups
		}
		if expired && isCompactFinished(cb) {
			plan.Delete = append(plan.Delete, cb)
		} else {
			plan.Keep = append(plan.Keep, cb)
		}
	}
	return plan
}

// compactEnd is cb's spec.endTs as a time; false when unreadable.
func compactEnd(cb *v1alpha1.CompactBackup) (time.Time, bool) {
	ts, err := v1alpha1.ParseTSO(cb.Spec.EndTs)
	return tsoTime(ts), err == nil
}

// isCompactFinished reports whether cb is Complete or Failed.
func isCompactFinished(cb *v1alpha1.CompactBackup) bool {
	return cb.Status.State == v1alpha1.CompactComplete || cb.Status.State == v1alpha1.CompactFailed
}
