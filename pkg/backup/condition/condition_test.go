package condition

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func bc(typ v1alpha1.BackupConditionType, s corev1.ConditionStatus, reason string, at metav1.Time) v1alpha1.BackupCondition {
	return v1alpha1.BackupCondition{Type: typ, Status: s, Reason: reason, LastTransitionTime: at}
}

func TestSetBackupCondition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		st          v1alpha1.BackupStatus
		set         v1alpha1.BackupCondition
		want        v1alpha1.BackupStatus
		wantChanged bool
	}{{
		name:        "appends a new condition and sets the phase when True",
		set:         bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", metav1.Time{}),
		want:        v1alpha1.BackupStatus{Phase: v1alpha1.BackupRunning, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t1)}},
		wantChanged: true,
	}, {
		name:        "a False condition leaves the phase",
		st:          v1alpha1.BackupStatus{Phase: v1alpha1.BackupScheduled},
		set:         bc(v1alpha1.BackupCleanFailed, corev1.ConditionFalse, "", metav1.Time{}),
		want:        v1alpha1.BackupStatus{Phase: v1alpha1.BackupScheduled, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupCleanFailed, corev1.ConditionFalse, "", t1)}},
		wantChanged: true,
	}, {
		name:        "same status keeps the transition time; no change reported",
		st:          v1alpha1.BackupStatus{Phase: v1alpha1.BackupRunning, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t0)}},
		set:         bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t1),
		want:        v1alpha1.BackupStatus{Phase: v1alpha1.BackupRunning, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t0)}},
		wantChanged: false,
	}, {
		name:        "same status, new reason: replaced, time kept",
		st:          v1alpha1.BackupStatus{Phase: v1alpha1.BackupFailed, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupFailed, corev1.ConditionTrue, "A", t0)}},
		set:         bc(v1alpha1.BackupFailed, corev1.ConditionTrue, "B", metav1.Time{}),
		want:        v1alpha1.BackupStatus{Phase: v1alpha1.BackupFailed, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupFailed, corev1.ConditionTrue, "B", t0)}},
		wantChanged: true,
	}, {
		name:        "status flip takes now",
		st:          v1alpha1.BackupStatus{Phase: v1alpha1.BackupComplete, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupInvalid, corev1.ConditionFalse, "", t0)}},
		set:         bc(v1alpha1.BackupInvalid, corev1.ConditionTrue, "", metav1.Time{}),
		want:        v1alpha1.BackupStatus{Phase: v1alpha1.BackupInvalid, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupInvalid, corev1.ConditionTrue, "", t1)}},
		wantChanged: true,
	}, {
		name:        "same condition, phase differs: only the phase changes",
		st:          v1alpha1.BackupStatus{Phase: v1alpha1.BackupScheduled, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t0)}},
		set:         bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", metav1.Time{}),
		want:        v1alpha1.BackupStatus{Phase: v1alpha1.BackupRunning, Conditions: []v1alpha1.BackupCondition{bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t0)}},
		wantChanged: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := tc.st
			st.Conditions = append([]v1alpha1.BackupCondition(nil), tc.st.Conditions...)
			if got := SetBackupCondition(&st, tc.set, t1); got != tc.wantChanged {
				t.Errorf("changed = %v, want %v", got, tc.wantChanged)
			}
			if d := cmp.Diff(tc.want, st); d != "" {
				t.Errorf("status (-want +got):\n%s", d)
			}
		})
	}
}

func TestSetRestoreCondition(t *testing.T) {
	t.Parallel()
	st := v1alpha1.RestoreStatus{}
	if !SetRestoreCondition(&st, v1alpha1.RestoreCondition{Type: v1alpha1.RestoreRunning, Status: corev1.ConditionTrue}, t0) {
		t.Fatal("first set reported no change")
	}
	if SetRestoreCondition(&st, v1alpha1.RestoreCondition{Type: v1alpha1.RestoreRunning, Status: corev1.ConditionTrue}, t1) {
		t.Error("repeated set reported a change")
	}
	if !SetRestoreCondition(&st, v1alpha1.RestoreCondition{Type: v1alpha1.RestoreComplete, Status: corev1.ConditionTrue}, t1) {
		t.Error("Complete reported no change")
	}
	want := v1alpha1.RestoreStatus{Phase: v1alpha1.RestoreComplete, Conditions: []v1alpha1.RestoreCondition{
		{Type: v1alpha1.RestoreRunning, Status: corev1.ConditionTrue, LastTransitionTime: t0},
		{Type: v1alpha1.RestoreComplete, Status: corev1.ConditionTrue, LastTransitionTime: t1},
	}}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	r := &v1alpha1.Restore{Status: st}
	if !IsRestoreComplete(r) || !IsRestoreRunning(r) || !IsRestoreFinished(r) || IsRestoreFailed(r) {
		t.Errorf("readers disagree with %+v", st)
	}
	if IsRestoreScheduled(r) || IsRestoreInvalid(r) || IsRestoreRetryFailed(r) {
		t.Errorf("readers report absent conditions as True: %+v", st)
	}
	if GetRestoreCondition(&st, v1alpha1.RestoreFailed) != nil {
		t.Error("GetRestoreCondition found an absent condition")
	}
}

func TestBackupReaders(t *testing.T) {
	t.Parallel()
	b := &v1alpha1.Backup{Status: v1alpha1.BackupStatus{Conditions: []v1alpha1.BackupCondition{
		bc(v1alpha1.BackupFailed, corev1.ConditionTrue, "", t0),
		bc(v1alpha1.BackupClean, corev1.ConditionFalse, "", t0),
	}}}
	checks := map[string]struct{ got, want bool }{
		"Failed":      {IsBackupFailed(b), true},
		"Finished":    {IsBackupFinished(b), true},
		"Clean":       {IsBackupClean(b), false},
		"Complete":    {IsBackupComplete(b), false},
		"Running":     {IsBackupRunning(b), false},
		"Scheduled":   {IsBackupScheduled(b), false},
		"RetryFailed": {IsBackupRetryFailed(b), false},
		"Invalid":     {IsBackupInvalid(b), false},
		"Prepare":     {IsBackupPrepare(b), false},
		"CleanFailed": {IsBackupCleanFailed(b), false},
	}
	for name, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	if c := GetBackupCondition(&b.Status, v1alpha1.BackupClean); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("GetBackupCondition(Clean) = %+v", c)
	}
}
