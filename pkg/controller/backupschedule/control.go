package backupschedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Control runs the sync of one BackupSchedule (see Sync).
type Control struct {
	backups  listers.BackupLister
	compacts listers.CompactBackupLister
	client   versioned.Interface
	clock    clock.PassiveClock
	writes   writer
	reports  *reporter
	unknown  *controller.UnknownFieldsReporter
}

// NewControl returns the control over the Backup and CompactBackup
// caches, the clientsets it writes with (pingcap objects; Jobs), the
// recorder of its events and the clock that says when a schedule is due.
func NewControl(backups listers.BackupLister, compacts listers.CompactBackupLister, client versioned.Interface,
	kube kubernetes.Interface, recorder record.EventRecorder, clk clock.PassiveClock) *Control {
	return &Control{
		backups: backups, compacts: compacts, client: client, clock: clk,
		writes:  writer{client: client, kube: kube, recorder: recorder},
		reports: newReporter(recorder),
		unknown: controller.NewUnknownFieldsReporter(recorder),
	}
}

// Result says when the schedule wants to be synced again.
type Result struct {
	// RequeueAfter is the delay until the next scheduled time (unless
	// paused) or the next Backup expiry under maxReservedTime, whichever is
	// first; 0 when nothing is ahead (an invalid spec, or a paused schedule
	// without expiries). A running Backup's update wakes the schedule too.
	RequeueAfter time.Duration
}

// syncState is what one sync has seen and decided so far.
type syncState struct {
	bs      *v1alpha1.BackupSchedule
	status  *v1alpha1.BackupScheduleStatus // to be written once, at the end
	now     time.Time
	sched   cron.Schedule
	created *v1alpha1.Backup // the snapshot Backup created by this sync
	wake    time.Time        // the earliest time to sync again; zero: none
}

// Sync reconciles bs, a copy the caller owns, in order:
//  1. validate (defaulted copy + cron.ParseStandard): an invalid spec gets
//     one FailedValidation Warning per generation and an IgnoreError, and
//     nothing is written (the status has no place for a condition);
//  2. name fields accepted but not acted on by a Warning, and a
//     compactBackupTemplate without the fields compaction needs;
//  3. unless paused: create the log backup once, then the snapshot Backup
//     of the latest scheduled time passed, when the last one finished (the
//     log backup first, because a point-in-time restore needs the logs
//     from the first snapshot on), then the next CompactBackup of the log
//     backup when one is due (syncCompact);
//  4. garbage-collect Backups and CompactBackups (also when paused, and
//     after a failed step 3, because retention must not wait for a backup
//     to succeed) and truncate the log backup up to the oldest snapshot
//     kept, but not past the compaction progress;
//  5. write the status once, only if it changed.
//
// Errors of steps 3 to 5 are joined and returned wrapped; the worker
// retries them with backoff, and every step is idempotent (Backup names are
// derived from the scheduled time).
func (c *Control) Sync(ctx context.Context, bs *v1alpha1.BackupSchedule) (Result, error) {
	c.unknown.Report(bs)
	sched, err := c.validate(bs)
	if err != nil {
		return Result{}, err
	}
	c.reportUnsupported(bs)
	c.reportCompactionIdle(bs)
	s := &syncState{bs: bs, status: bs.Status.DeepCopy(), now: c.clock.Now(), sched: sched}
	var errs []error
	if bs.Spec.Pause {
		klog.FromContext(ctx).V(2).Info("paused: no Backup is created", "backupSchedule", klog.KObj(bs))
	} else {
		errs = append(errs, c.syncLogBackup(ctx, s), c.syncSnapshot(ctx, s), c.syncCompact(ctx, s))
	}
	errs = append(errs, c.collectGarbage(ctx, s), c.collectCompactions(ctx, s))
	if !equality.Semantic.DeepEqual(&bs.Status, s.status) {
		errs = append(errs, c.writes.writeStatus(ctx, bs, s.status))
	}
	var res Result
	if !s.wake.IsZero() {
		res.RequeueAfter = max(s.wake.Sub(s.now), 0)
	}
	return res, errors.Join(errs...)
}

// validate returns bs's parsed schedule, or an IgnoreError (after a
// FailedValidation event once per generation) when the spec is invalid.
func (c *Control) validate(bs *v1alpha1.BackupSchedule) (cron.Schedule, error) {
	d := bs.DeepCopy()
	defaulting.SetBackupScheduleDefaults(d)
	msg := ""
	if errs := validation.ValidateBackupSchedule(d); len(errs) > 0 {
		msg = errs.ToAggregate().Error()
	}
	var sched cron.Schedule
	if msg == "" {
		var err error
		if sched, err = parseSchedule(bs.Spec.Schedule); err != nil {
			msg = "spec.schedule: " + err.Error()
		}
	}
	if msg == "" {
		c.reports.clear(bs, ReasonFailedValidation)
		return sched, nil
	}
	c.reports.once(bs, corev1.EventTypeWarning, ReasonFailedValidation,
		fmt.Sprintf("invalid spec (generation %d), no Backup is created or deleted until it is fixed: %s", bs.Generation, msg))
	return nil, flow.Ignore(fmt.Errorf("BackupSchedule %s/%s has an invalid spec: %s", bs.Namespace, bs.Name, msg))
}

// reportUnsupported names, once per generation, the registry's
// BackupSchedule fields set on bs, which this operator version accepts but
// does not act on.
func (c *Control) reportUnsupported(bs *v1alpha1.BackupSchedule) {
	fields := unsupported.Fields(unsupported.BackupSchedule, bs)
	if len(fields) == 0 {
		c.reports.clear(bs, ReasonUnsupported)
		return
	}
	c.reports.once(bs, corev1.EventTypeWarning, ReasonUnsupported,
		strings.Join(fields, ", ")+" accepted but not acted on by this operator version")
}

// syncLogBackup creates the log backup "log-<bs>" once, when bs has a
// logBackupTemplate and status.logBackup is unset, and records its name
// and now as logBackupStartTs (where compactions start).
func (c *Control) syncLogBackup(ctx context.Context, s *syncState) error {
	if s.bs.Spec.LogBackupTemplate == nil || s.status.LogBackup != nil {
		return nil
	}
	lb, err := c.createOrAdopt(ctx, s.bs, newLogBackup(s.bs, s.now))
	if err != nil {
		return err
	}
	s.status.LogBackup = &lb.Name
	s.status.LogBackupStartTs = &metav1.Time{Time: s.now.Truncate(time.Second)}
	return nil
}

// syncSnapshot creates the snapshot Backup of the latest scheduled time in
// (last served, now] when the last Backup finished, fast-forwards past more
// than MaxMissedSchedules missed times, and asks to be woken at the next
// scheduled time. Nothing due means no write.
func (c *Control) syncSnapshot(ctx context.Context, s *syncState) error {
	logger := klog.FromContext(ctx)
	due := scheduleDue(s.sched, lastServed(s.bs), s.now)
	s.wakeAt(due.Next)
	if due.FastForward {
		s.status.LastBackupTime = &metav1.Time{Time: s.now.Truncate(time.Second)}
		c.writes.recorder.Eventf(s.bs, corev1.EventTypeWarning, ReasonFastForwarded,
			"more than %d scheduled times passed without a Backup (was the operator down?); skipping them, next Backup at %s",
			MaxMissedSchedules, due.Next.UTC().Format(time.RFC3339))
		return nil
	}
	if due.Due.IsZero() {
		return nil
	}
	prev, finished, err := c.lastBackupFinished(ctx, s)
	if err != nil {
		return err
	}
	if !finished {
		logger.V(2).Info("backup due, waiting for the last one to finish", "backupSchedule", klog.KObj(s.bs),
			"due", due.Due, "lastBackup", s.status.LastBackup)
		return nil
	}
	b, err := c.createOrAdopt(ctx, s.bs, newBackup(s.bs, due.Due))
	if err != nil {
		return err
	}
	s.created = b
	s.status.LastBackup = b.Name
	s.status.LastBackupTime = &metav1.Time{Time: due.Due}
	logger.Info("backup created", "backupSchedule", klog.KObj(s.bs), "backup", b.Name, "scheduled", due.Due, "missed", due.Missed-1)
	if prev != nil && isComplete(prev) {
		// Best effort: a Job left behind costs only its record, and the
		// Backup's deletion removes it through the owner reference.
		if err := c.writes.deleteJob(ctx, s.bs, backupJobName(prev.Name)); err != nil {
			logger.Info("cannot delete the Job of the last Backup", "err", err)
		}
	}
	return nil
}

// backupJobName is the Job the Backup controller runs a snapshot backup in.
func backupJobName(backup string) string { return "backup-" + backup }

// lastServed is where the walk to the next scheduled time starts: the last
// Backup's scheduled time, else when garbage collection deleted every
// Backup, else the schedule's creation.
func lastServed(bs *v1alpha1.BackupSchedule) time.Time {
	switch {
	case bs.Status.LastBackupTime != nil:
		return bs.Status.LastBackupTime.Time
	case bs.Status.AllBackupCleanTime != nil:
		return bs.Status.AllBackupCleanTime.Time
	default:
		return bs.CreationTimestamp.Time
	}
}

// lastBackupFinished reports whether status.lastBackup finished (Complete,
// Failed or Invalid), is being deleted, or is gone, so that the next
// Backup may start: one Backup of a schedule runs at a time. A Backup
// missing from the cache is looked up in the API, because the cache may
// not have seen a Backup created a moment ago.
func (c *Control) lastBackupFinished(ctx context.Context, s *syncState) (*v1alpha1.Backup, bool, error) {
	name := s.status.LastBackup
	if name == "" {
		return nil, true, nil
	}
	b, err := c.backups.Backups(s.bs.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		b, err = c.client.PingcapV1alpha1().Backups(s.bs.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get last Backup %s/%s: %w", s.bs.Namespace, name, err)
	}
	return b, isFinished(b) || b.DeletionTimestamp != nil, nil
}

// createOrAdopt creates b, or, when a Backup of that name already exists
// and bs controls it (a previous sync created it but could not record it),
// returns that one. A Backup of that name owned by something else is an
// error.
func (c *Control) createOrAdopt(ctx context.Context, bs *v1alpha1.BackupSchedule, b *v1alpha1.Backup) (*v1alpha1.Backup, error) {
	created, err := c.writes.createBackup(ctx, bs, b)
	if err == nil {
		return created, nil
	}
	if apierrors.IsInvalid(err) {
		// The API server's rules refuse the Backup built from this spec
		// (such as a name too long): retrying cannot help until the spec
		// changes, and the resync tries again.
		return nil, flow.Ignore(fmt.Errorf("create Backup %s/%s: %w", b.Namespace, b.Name, err))
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	existing, err := c.client.PingcapV1alpha1().Backups(b.Namespace).Get(ctx, b.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get existing Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	if ref := metav1.GetControllerOf(existing); ref == nil || ref.UID != bs.UID {
		c.writes.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedCreate,
			"Backup %s exists and does not belong to BackupSchedule %s", b.Name, bs.Name)
		return nil, fmt.Errorf("backup %s/%s exists and is not controlled by BackupSchedule %s", b.Namespace, b.Name, bs.Name)
	}
	return existing, nil
}

// snapshotBackups lists from the cache bs's snapshot Backups not being
// deleted: labelled with its name, not its log backup, and not controlled
// by another object (such as a deleted schedule of the same name).
func (c *Control) snapshotBackups(bs *v1alpha1.BackupSchedule) ([]*v1alpha1.Backup, error) {
	sel := labels.SelectorFromSet(labels.Set{ScheduleLabelKey: bs.Name})
	all, err := c.backups.Backups(bs.Namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list Backups of BackupSchedule %s/%s: %w", bs.Namespace, bs.Name, err)
	}
	var out []*v1alpha1.Backup
	for _, b := range all {
		if b.DeletionTimestamp != nil || b.Spec.BackupMode == v1alpha1.BackupModeLog || b.Name == logBackupName(bs) {
			continue
		}
		if ref := metav1.GetControllerOf(b); ref != nil && ref.UID != bs.UID {
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// wakeAt asks for a sync at t unless an earlier one is asked already; a
// zero t asks nothing.
func (s *syncState) wakeAt(t time.Time) {
	if !t.IsZero() && (s.wake.IsZero() || t.Before(s.wake)) {
		s.wake = t
	}
}
