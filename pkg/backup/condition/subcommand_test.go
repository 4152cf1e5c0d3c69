package condition

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func cmdCond(cmd v1alpha1.LogSubCommandType, typ v1alpha1.BackupConditionType, s corev1.ConditionStatus) v1alpha1.BackupCondition {
	return v1alpha1.BackupCondition{Command: cmd, Type: typ, Status: s}
}

// A start run moves its own status through Prepare to Complete, with its
// times, while a condition without a command writes no entry.
func TestSubCommandStatusStartRun(t *testing.T) {
	t.Parallel()
	t2 := metav1.NewTime(t1.Add(1))
	var st v1alpha1.BackupStatus
	if SetBackupCondition(&st, bc(v1alpha1.BackupRunning, corev1.ConditionTrue, "", t0), t0); st.LogSubCommandStatuses != nil {
		t.Fatalf("a condition with no command wrote %v", st.LogSubCommandStatuses)
	}
	SetBackupCondition(&st, cmdCond(logStart, v1alpha1.BackupPrepare, corev1.ConditionTrue), t0)
	SetBackupCondition(&st, cmdCond(logStart, v1alpha1.BackupRunning, corev1.ConditionTrue), t1)
	if !SetBackupCondition(&st, cmdCond(logStart, v1alpha1.BackupComplete, corev1.ConditionTrue), t2) {
		t.Fatal("Complete reported no change")
	}
	got := st.LogSubCommandStatuses[logStart]
	if got.Command != logStart || got.Phase != v1alpha1.BackupComplete || !got.TimeStarted.Equal(&t0) || !got.TimeCompleted.Equal(&t2) {
		t.Fatalf("log-start status %+v, want Complete started %v completed %v", got, t0, t2)
	}
	if len(got.Conditions) != 3 || got.Conditions[2].Type != v1alpha1.BackupComplete || !got.Conditions[2].LastTransitionTime.Equal(&t2) {
		t.Fatalf("log-start conditions %+v, want Prepare, Running, Complete at %v", got.Conditions, t2)
	}
	if SetBackupCondition(&st, cmdCond(logStart, v1alpha1.BackupComplete, corev1.ConditionTrue), metav1.NewTime(t2.Add(1))) {
		t.Error("repeating Complete reported a change")
	}
}

// A failed pause fails only its own status (False in the whole status);
// a pause marks the resume status Repeatable and a new resume run starts
// its times afresh.
func TestSubCommandStatusPauseResume(t *testing.T) {
	t.Parallel()
	t2, t3 := metav1.NewTime(t1.Add(1)), metav1.NewTime(t1.Add(2))
	var st v1alpha1.BackupStatus
	SetBackupCondition(&st, cmdCond(logPause, v1alpha1.BackupFailed, corev1.ConditionFalse), t0)
	if p := st.LogSubCommandStatuses[logPause]; p.Phase != v1alpha1.BackupFailed || !p.TimeCompleted.Equal(&t0) ||
		p.Conditions[0].Status != corev1.ConditionTrue {
		t.Fatalf("failed pause status %+v, want phase Failed (True) completed at %v", p, t0)
	}
	if st.Phase == v1alpha1.BackupFailed {
		t.Fatal("a False Failed pause failed the whole Backup")
	}
	SetBackupCondition(&st, cmdCond(logPause, BackupPaused, corev1.ConditionTrue), t1)
	SetBackupCondition(&st, cmdCond(logPause, v1alpha1.BackupRunning, corev1.ConditionFalse), t1)
	if p := st.LogSubCommandStatuses[logPause]; p.Phase != v1alpha1.BackupComplete || !p.TimeStarted.Equal(&t1) || len(p.Conditions) != 2 {
		t.Fatalf("pause status %+v, want Complete started %v with Failed and Complete only", p, t1)
	}
	MarkSubCommandScheduled(&st, logResume, "JobCreated", "", t1)
	SetBackupCondition(&st, cmdCond(logResume, v1alpha1.BackupRunning, corev1.ConditionTrue), t2)
	if r := st.LogSubCommandStatuses[logResume]; r.Phase != v1alpha1.BackupComplete || !r.TimeStarted.Equal(&t1) || !r.TimeCompleted.Equal(&t2) {
		t.Fatalf("resume status %+v, want Complete started %v completed %v", r, t1, t2)
	}
	if p := st.LogSubCommandStatuses[logPause]; p.Phase != v1alpha1.BackupRepeatable {
		t.Fatalf("pause status after resume %+v, want Repeatable", p)
	}
	SetBackupCondition(&st, cmdCond(logPause, BackupPaused, corev1.ConditionTrue), t3)
	p, r := st.LogSubCommandStatuses[logPause], st.LogSubCommandStatuses[logResume]
	if p.Phase != v1alpha1.BackupComplete || !p.TimeStarted.Equal(&t3) || !p.TimeCompleted.Equal(&t3) {
		t.Errorf("second pause %+v, want Complete started and completed %v", p, t3)
	}
	if r.Phase != v1alpha1.BackupRepeatable || !r.TimeStarted.Equal(&t1) {
		t.Errorf("resume after the second pause %+v, want Repeatable, started %v", r, t1)
	}
}

// SetLogTruncatingUntil records the TSO once and reports no change after.
func TestSetLogTruncatingUntil(t *testing.T) {
	t.Parallel()
	var st v1alpha1.BackupStatus
	if !SetLogTruncatingUntil(&st, "42") || SetLogTruncatingUntil(&st, "42") {
		t.Fatal("want a change on the first write only")
	}
	SetBackupCondition(&st, cmdCond(logTruncate, v1alpha1.BackupPrepare, corev1.ConditionTrue), t0)
	if got := st.LogSubCommandStatuses[logTruncate]; got.LogTruncatingUntil != "42" || got.Phase != v1alpha1.BackupPrepare {
		t.Fatalf("truncate status %+v, want until 42, Prepare", got)
	}
}
