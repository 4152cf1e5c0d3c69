// Package condition holds the pure functions that read and write the
// conditions of a Backup and a Restore. The Backup/Restore controllers and the
// backup-manager both use them, so the two writers of a CR's status agree on
// what a condition change means.
package condition

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// SetBackupCondition replaces the condition of c.Type in st (or appends it),
// keeping the old LastTransitionTime when the Status did not change and using
// now otherwise (also when c carries none). When c.Status is True the phase
// becomes c.Type. A condition of a log subcommand (c.Command) is also
// recorded in that subcommand's status.logSubCommandStatuses entry. It
// reports whether st changed.
func SetBackupCondition(st *v1alpha1.BackupStatus, c v1alpha1.BackupCondition, now metav1.Time) bool {
	changed := setSubCommandStatus(st, c, now)
	if c.Status == corev1.ConditionTrue && st.Phase != c.Type {
		st.Phase = c.Type
		changed = true
	}
	for i := range st.Conditions {
		old := st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
		if old == c {
			return changed
		}
		st.Conditions[i] = c
		return true
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
	return true
}

// SetRestoreCondition is SetBackupCondition for a Restore: it replaces or
// appends the condition of c.Type, keeps LastTransitionTime when the Status
// did not change, sets the phase to c.Type when c.Status is True, and reports
// whether st changed.
func SetRestoreCondition(st *v1alpha1.RestoreStatus, c v1alpha1.RestoreCondition, now metav1.Time) bool {
	changed := false
	if c.Status == corev1.ConditionTrue && st.Phase != c.Type {
		st.Phase = c.Type
		changed = true
	}
	for i := range st.Conditions {
		old := st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		} else {
			c.LastTransitionTime = now
		}
		if old == c {
			return changed
		}
		st.Conditions[i] = c
		return true
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
	return true
}

// GetBackupCondition returns the condition of type t in st, or nil when st has
// none.
func GetBackupCondition(st *v1alpha1.BackupStatus, t v1alpha1.BackupConditionType) *v1alpha1.BackupCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// GetRestoreCondition returns the condition of type t in st, or nil when st
// has none.
func GetRestoreCondition(st *v1alpha1.RestoreStatus, t v1alpha1.RestoreConditionType) *v1alpha1.RestoreCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// IsBackupTrue reports whether the Backup's condition of type t is True.
func IsBackupTrue(b *v1alpha1.Backup, t v1alpha1.BackupConditionType) bool {
	c := GetBackupCondition(&b.Status, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsRestoreTrue reports whether the Restore's condition of type t is True.
func IsRestoreTrue(r *v1alpha1.Restore, t v1alpha1.RestoreConditionType) bool {
	c := GetRestoreCondition(&r.Status, t)
	return c != nil && c.Status == corev1.ConditionTrue
}
