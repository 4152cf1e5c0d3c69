package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// backupStatusFor returns a copy of s that reports message: for an invalid
// spec (message set) a True Invalid condition with reason InvalidSpec and
// phase Invalid; for a valid one no Invalid condition, and a phase that was
// Invalid falls back to the last True condition left (none: empty). The
// transition time of an Invalid condition that stays True is kept, so an
// unchanged verdict yields an equal status.
func backupStatusFor(s *v1alpha1.BackupStatus, message string, now metav1.Time) *v1alpha1.BackupStatus {
	out := s.DeepCopy()
	isInvalid := func(c v1alpha1.BackupCondition) bool { return c.Type == v1alpha1.BackupInvalid }
	if message == "" {
		out.Conditions = slices.DeleteFunc(out.Conditions, isInvalid)
		if len(out.Conditions) == 0 {
			out.Conditions = nil
		}
		if out.Phase == v1alpha1.BackupInvalid {
			out.Phase = ""
			for _, c := range out.Conditions {
				if c.Status == corev1.ConditionTrue && string(c.Type) != ConditionUnsupported {
					out.Phase = c.Type
				}
			}
		}
		return out
	}
	want := v1alpha1.BackupCondition{Type: v1alpha1.BackupInvalid, Status: corev1.ConditionTrue,
		Reason: ReasonInvalidSpec, Message: message, LastTransitionTime: now}
	if i := slices.IndexFunc(out.Conditions, isInvalid); i >= 0 {
		if out.Conditions[i].Status == corev1.ConditionTrue {
			want.LastTransitionTime = out.Conditions[i].LastTransitionTime
		}
		out.Conditions[i] = want
	} else {
		out.Conditions = append(out.Conditions, want)
	}
	out.Phase = v1alpha1.BackupInvalid
	return out
}

// restoreStatusFor is backupStatusFor for a Restore.
func restoreStatusFor(s *v1alpha1.RestoreStatus, message string, now metav1.Time) *v1alpha1.RestoreStatus {
	out := s.DeepCopy()
	isInvalid := func(c v1alpha1.RestoreCondition) bool { return c.Type == v1alpha1.RestoreInvalid }
	if message == "" {
		out.Conditions = slices.DeleteFunc(out.Conditions, isInvalid)
		if len(out.Conditions) == 0 {
			out.Conditions = nil
		}
		if out.Phase == v1alpha1.RestoreInvalid {
			out.Phase = ""
			for _, c := range out.Conditions {
				if c.Status == corev1.ConditionTrue && string(c.Type) != ConditionUnsupported {
					out.Phase = c.Type
				}
			}
		}
		return out
	}
	want := v1alpha1.RestoreCondition{Type: v1alpha1.RestoreInvalid, Status: corev1.ConditionTrue,
		Reason: ReasonInvalidSpec, Message: message, LastTransitionTime: now}
	if i := slices.IndexFunc(out.Conditions, isInvalid); i >= 0 {
		if out.Conditions[i].Status == corev1.ConditionTrue {
			want.LastTransitionTime = out.Conditions[i].LastTransitionTime
		}
		out.Conditions[i] = want
	} else {
		out.Conditions = append(out.Conditions, want)
	}
	out.Phase = v1alpha1.RestoreInvalid
	return out
}

// backupInvalidMessage returns the message of b's True Invalid condition, or "".
func backupInvalidMessage(b *v1alpha1.Backup) string {
	for _, c := range b.Status.Conditions {
		if c.Type == v1alpha1.BackupInvalid && c.Status == corev1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}

// restoreInvalidMessage returns the message of r's True Invalid condition, or "".
func restoreInvalidMessage(r *v1alpha1.Restore) string {
	for _, c := range r.Status.Conditions {
		if c.Type == v1alpha1.RestoreInvalid && c.Status == corev1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}

// syncBackupStatus patches b's phase and conditions to report message (and
// the Unsupported condition to report unsupportedMsg) when they differ from
// the cached b; see statusPatch.
func syncBackupStatus(ctx context.Context, client versioned.Interface, b *v1alpha1.Backup, message, unsupportedMsg string,
	now metav1.Time) (bool, error) {
	want := backupStatusFor(&b.Status, message, now)
	want.Conditions = withUnsupported(want.Conditions, unsupportedMsg, now,
		func(c v1alpha1.BackupCondition) string { return string(c.Type) },
		func(c v1alpha1.BackupCondition) (bool, string, metav1.Time) {
			return c.Status == corev1.ConditionTrue, c.Message, c.LastTransitionTime
		},
		func(msg string, at metav1.Time) v1alpha1.BackupCondition {
			return v1alpha1.BackupCondition{Type: ConditionUnsupported, Status: corev1.ConditionTrue,
				Reason: ReasonUnsupported, Message: msg, LastTransitionTime: at}
		})
	if equality.Semantic.DeepEqual(&b.Status, want) {
		return false, nil
	}
	hadStatus := !equality.Semantic.DeepEqual(&b.Status, &v1alpha1.BackupStatus{})
	patch, err := statusPatch(b.UID, hadStatus, string(b.Status.Phase), string(want.Phase), b.Status.Conditions, want.Conditions)
	if err != nil {
		return false, fmt.Errorf("encode status of Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	_, err = client.PingcapV1alpha1().Backups(b.Namespace).Patch(ctx, b.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return false, fmt.Errorf("update status of Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	return true, nil
}

// syncRestoreStatus is syncBackupStatus for a Restore.
func syncRestoreStatus(ctx context.Context, client versioned.Interface, r *v1alpha1.Restore, message, unsupportedMsg string,
	now metav1.Time) (bool, error) {
	want := restoreStatusFor(&r.Status, message, now)
	want.Conditions = withUnsupported(want.Conditions, unsupportedMsg, now,
		func(c v1alpha1.RestoreCondition) string { return string(c.Type) },
		func(c v1alpha1.RestoreCondition) (bool, string, metav1.Time) {
			return c.Status == corev1.ConditionTrue, c.Message, c.LastTransitionTime
		},
		func(msg string, at metav1.Time) v1alpha1.RestoreCondition {
			return v1alpha1.RestoreCondition{Type: ConditionUnsupported, Status: corev1.ConditionTrue,
				Reason: ReasonUnsupported, Message: msg, LastTransitionTime: at}
		})
	if equality.Semantic.DeepEqual(&r.Status, want) {
		return false, nil
	}
	hadStatus := !equality.Semantic.DeepEqual(&r.Status, &v1alpha1.RestoreStatus{})
	patch, err := statusPatch(r.UID, hadStatus, string(r.Status.Phase), string(want.Phase), r.Status.Conditions, want.Conditions)
	if err != nil {
		return false, fmt.Errorf("encode status of Restore %s/%s: %w", r.Namespace, r.Name, err)
	}
	_, err = client.PingcapV1alpha1().Restores(r.Namespace).Patch(ctx, r.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return false, fmt.Errorf("update status of Restore %s/%s: %w", r.Namespace, r.Name, err)
	}
	return true, nil
}

// statusPatch returns a JSON patch for the status subresource that sets
// status.phase and status.conditions from the old to the new values and
// touches no other status field, because a backup or restore job may own
// them one day. It is guarded by the object's UID instead of its
// resourceVersion, as the TidbCluster status writer is: a concurrent spec
// edit must not turn the write into a conflict, while a deleted and
// recreated object of the same name fails the test op. hadStatus says
// whether the cached object has any status: without one the server's
// object may lack /status, which must then be added whole.
func statusPatch[C any](uid types.UID, hadStatus bool, oldPhase, newPhase string, oldConds, newConds []C) ([]byte, error) {
	ops := []map[string]any{{"op": "test", "path": "/metadata/uid", "value": uid}}
	if !hadStatus {
		status := map[string]any{}
		if newPhase != "" {
			status["phase"] = newPhase
		}
		if len(newConds) > 0 {
			status["conditions"] = newConds
		}
		ops = append(ops, map[string]any{"op": "add", "path": "/status", "value": status})
		return json.Marshal(ops)
	}
	if oldPhase != newPhase {
		ops = append(ops, fieldOp("/status/phase", newPhase == "", newPhase))
	}
	if !equality.Semantic.DeepEqual(oldConds, newConds) {
		ops = append(ops, fieldOp("/status/conditions", len(newConds) == 0, newConds))
	}
	return json.Marshal(ops)
}

// fieldOp removes path when empty (the field exists, because it changed
// from a value), and otherwise adds it, which also replaces an existing value.
func fieldOp(path string, empty bool, value any) map[string]any {
	if empty {
		return map[string]any{"op": "remove", "path": path}
	}
	return map[string]any{"op": "add", "path": path, "value": value}
}

// ConditionUnsupported is the condition of a Backup or Restore that names
// the fields it sets that this operator version does not act on (the
// registry in pkg/apis/pingcap/v1alpha1/unsupported). It is True while
// there are some and absent otherwise, and never sets the phase.
const ConditionUnsupported = "Unsupported"

// withUnsupported returns conds with the Unsupported condition saying msg
// (absent when msg is ""), its transition time kept while the message
// stays; typeOf, read and build adapt it to the kind's condition type.
func withUnsupported[C any](conds []C, msg string, now metav1.Time, typeOf func(C) string,
	read func(C) (bool, string, metav1.Time), build func(string, metav1.Time) C) []C {
	i := slices.IndexFunc(conds, func(c C) bool { return typeOf(c) == ConditionUnsupported })
	if msg == "" {
		if i < 0 {
			return conds
		}
		out := slices.Delete(slices.Clone(conds), i, i+1)
		if len(out) == 0 {
			return nil
		}
		return out
	}
	at := now
	if i >= 0 {
		if on, old, t := read(conds[i]); on && old == msg {
			at = t
		}
		out := slices.Clone(conds)
		out[i] = build(msg, at)
		return out
	}
	return append(slices.Clone(conds), build(msg, at))
}
