package backupschedule

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// Event reasons recorded on the BackupSchedule.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
	ReasonSuccessfulUpdate = "SuccessfulUpdate"
	ReasonFailedUpdate     = "FailedUpdate"
	// ReasonFailedValidation: the spec is invalid; nothing is created or
	// deleted until it is fixed.
	ReasonFailedValidation = "FailedValidation"
	// ReasonUnsupported: a field is accepted but not acted on.
	ReasonUnsupported = "Unsupported"
	// ReasonFastForwarded: more than MaxMissedSchedules times passed
	// unserved; none of them gets a Backup.
	ReasonFastForwarded = "FastForwarded"
)

// writer makes every API write of the controller, one event each: Normal
// Successful<Verb> or Warning Failed<Verb> on the schedule.
type writer struct {
	client   versioned.Interface
	kube     kubernetes.Interface
	recorder record.EventRecorder
}

// createBackup creates b for bs. The API error is returned unwrapped, so
// that the caller can tell AlreadyExists; other errors get a FailedCreate
// event.
func (w writer) createBackup(ctx context.Context, bs *v1alpha1.BackupSchedule, b *v1alpha1.Backup) (*v1alpha1.Backup, error) {
	created, err := w.client.PingcapV1alpha1().Backups(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.IsAlreadyExists(err) {
			w.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedCreate,
				"create Backup %s for BackupSchedule %s failed: %v", b.Name, bs.Name, err)
		}
		return nil, err
	}
	w.recorder.Eventf(bs, corev1.EventTypeNormal, ReasonSuccessfulCreate,
		"create Backup %s for BackupSchedule %s successful", b.Name, bs.Name)
	return created, nil
}

// createCompact creates cb for bs with a SuccessfulCreate event; the API
// error is returned unwrapped (AlreadyExists gets no event).
func (w writer) createCompact(ctx context.Context, bs *v1alpha1.BackupSchedule, cb *v1alpha1.CompactBackup) error {
	_, err := w.client.PingcapV1alpha1().CompactBackups(cb.Namespace).Create(ctx, cb, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.IsAlreadyExists(err) {
			w.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedCreate,
				"create CompactBackup %s/%s for backupSchedule/%s failed: %v", cb.Namespace, cb.Name, bs.Name, err)
		}
		return err
	}
	w.recorder.Eventf(bs, corev1.EventTypeNormal, ReasonSuccessfulCreate,
		"create CompactBackup %s/%s for backupSchedule/%s successful", cb.Namespace, cb.Name, bs.Name)
	return nil
}

// deleteCompact deletes cb (by UID); one already gone is not an error.
func (w writer) deleteCompact(ctx context.Context, bs *v1alpha1.BackupSchedule, cb *v1alpha1.CompactBackup, why string) error {
	uid := cb.UID
	err := w.client.PingcapV1alpha1().CompactBackups(cb.Namespace).Delete(ctx, cb.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedDelete,
			"delete CompactBackup %s/%s for backupSchedule/%s failed: %v", cb.Namespace, cb.Name, bs.Name, err)
		return fmt.Errorf("delete CompactBackup %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	w.recorder.Eventf(bs, corev1.EventTypeNormal, ReasonSuccessfulDelete,
		"delete CompactBackup %s/%s for backupSchedule/%s successful (%s)", cb.Namespace, cb.Name, bs.Name, why)
	return nil
}

// deleteBackup deletes b (by UID: a recreated Backup of the same name is
// left alone); the Backup controller then cleans its data per cleanPolicy.
// A Backup already gone is not an error.
func (w writer) deleteBackup(ctx context.Context, bs *v1alpha1.BackupSchedule, b *v1alpha1.Backup, why string) error {
	uid := b.UID
	err := w.client.PingcapV1alpha1().Backups(b.Namespace).Delete(ctx, b.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedDelete,
			"delete Backup %s for BackupSchedule %s failed: %v", b.Name, bs.Name, err)
		return fmt.Errorf("delete Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	w.recorder.Eventf(bs, corev1.EventTypeNormal, ReasonSuccessfulDelete,
		"delete Backup %s for BackupSchedule %s successful (%s)", b.Name, bs.Name, why)
	return nil
}

// truncateLog sets the log backup lb's spec.logTruncateUntil to ts, which
// makes the Backup controller run the truncate job. The merge patch carries
// lb's UID, so it fails on a recreated log backup.
func (w writer) truncateLog(ctx context.Context, bs *v1alpha1.BackupSchedule, lb *v1alpha1.Backup, ts uint64) error {
	until := strconv.FormatUint(ts, 10)
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": lb.UID},
		"spec":     map[string]any{"logTruncateUntil": until},
	})
	if err != nil {
		return fmt.Errorf("encode truncation of Backup %s/%s: %w", lb.Namespace, lb.Name, err)
	}
	_, err = w.client.PingcapV1alpha1().Backups(lb.Namespace).Patch(ctx, lb.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		w.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedUpdate,
			"truncate log Backup %s until %s for BackupSchedule %s failed: %v", lb.Name, until, bs.Name, err)
		return fmt.Errorf("truncate log Backup %s/%s: %w", lb.Namespace, lb.Name, err)
	}
	w.recorder.Eventf(bs, corev1.EventTypeNormal, ReasonSuccessfulUpdate,
		"truncate log Backup %s until %s (the oldest snapshot kept) for BackupSchedule %s successful", lb.Name, until, bs.Name)
	return nil
}

// deleteJob deletes the Job of a Complete Backup (its pods go with it, as
// in the TiDB Operator, so finished Jobs do not pile up). A Job already
// gone is not an error.
func (w writer) deleteJob(ctx context.Context, bs *v1alpha1.BackupSchedule, name string) error {
	policy := metav1.DeletePropagationBackground
	err := w.kube.BatchV1().Jobs(bs.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		w.recorder.Eventf(bs, corev1.EventTypeWarning, ReasonFailedDelete,
			"delete Job %s for BackupSchedule %s failed: %v", name, bs.Name, err)
		return fmt.Errorf("delete Job %s/%s: %w", bs.Namespace, name, err)
	}
	w.recorder.Eventf(bs, corev1.EventTypeNormal, ReasonSuccessfulDelete,
		"delete Job %s of the complete Backup for BackupSchedule %s successful", name, bs.Name)
	return nil
}

// writeStatus writes want as bs's status through the status subresource
// with a merge patch of the fields this controller owns (an empty one is
// removed) and bs's UID, so that it neither conflicts with a concurrent
// spec edit nor lands on a recreated schedule of the same name.
func (w writer) writeStatus(ctx context.Context, bs *v1alpha1.BackupSchedule, want *v1alpha1.BackupScheduleStatus) error {
	status := map[string]any{}
	set := func(key string, present bool, value any) {
		status[key] = nil
		if present {
			status[key] = value
		}
	}
	set("lastBackup", want.LastBackup != "", want.LastBackup)
	set("lastBackupTime", want.LastBackupTime != nil, want.LastBackupTime)
	set("allBackupCleanTime", want.AllBackupCleanTime != nil, want.AllBackupCleanTime)
	set("logBackup", want.LogBackup != nil, want.LogBackup)
	set("logBackupStartTs", want.LogBackupStartTs != nil, want.LogBackupStartTs)
	set("lastCompact", want.LastCompact != "", want.LastCompact)
	set("lastCompactProgress", want.LastCompactProgress != nil, want.LastCompactProgress)
	set("lastCompactExecutionTs", want.LastCompactExecutionTs != nil, want.LastCompactExecutionTs)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": bs.UID}, "status": status})
	if err != nil {
		return fmt.Errorf("encode status of BackupSchedule %s/%s: %w", bs.Namespace, bs.Name, err)
	}
	_, err = w.client.PingcapV1alpha1().BackupSchedules(bs.Namespace).Patch(ctx, bs.Name, types.MergePatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("update status of BackupSchedule %s/%s: %w", bs.Namespace, bs.Name, err)
	}
	return nil
}
