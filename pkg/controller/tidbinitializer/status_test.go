package tidbinitializer

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestJobPhase(t *testing.T) {
	t.Parallel()
	cond := func(t batchv1.JobConditionType, s corev1.ConditionStatus) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: t, Status: s}}
	}
	cases := []struct {
		name   string
		status batchv1.JobStatus
		want   v1alpha1.InitializePhase
	}{
		{"new", batchv1.JobStatus{}, v1alpha1.InitializePhasePending},
		{"active pod", batchv1.JobStatus{Active: 1}, v1alpha1.InitializePhaseRunning},
		{"complete", batchv1.JobStatus{Succeeded: 1, Conditions: cond(batchv1.JobComplete, corev1.ConditionTrue)}, v1alpha1.InitializePhaseCompleted},
		{"success criteria met, not complete yet", batchv1.JobStatus{Active: 1, Conditions: cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}, v1alpha1.InitializePhaseRunning},
		{"failed", batchv1.JobStatus{Failed: 1, Conditions: cond(batchv1.JobFailed, corev1.ConditionTrue)}, v1alpha1.InitializePhaseFailed},
		{"failure target, pod still terminating", batchv1.JobStatus{Active: 1, Conditions: cond(batchv1.JobFailureTarget, corev1.ConditionTrue)}, v1alpha1.InitializePhaseRunning},
		{"complete False", batchv1.JobStatus{Conditions: cond(batchv1.JobComplete, corev1.ConditionFalse)}, v1alpha1.InitializePhasePending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			job := &batchv1.Job{Status: c.status}
			st := mirrorStatus(job)
			if st.Phase != c.want {
				t.Errorf("phase %s, want %s", st.Phase, c.want)
			}
			if st.Active != c.status.Active || st.Succeeded != c.status.Succeeded || st.Failed != c.status.Failed ||
				len(st.Conditions) != len(c.status.Conditions) {
				t.Errorf("job status not mirrored: %+v from %+v", st.JobStatus, c.status)
			}
		})
	}
}

// TestPendingStatusKeepsTransitionTime: the same reason and message keep
// the condition's times, so a repeated sync writes nothing.
func TestPendingStatusKeepsTransitionTime(t *testing.T) {
	t.Parallel()
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	first := pendingStatus(&v1alpha1.TidbInitializerStatus{}, ReasonSecretNotFound, "missing", t0)
	again := pendingStatus(&first, ReasonSecretNotFound, "missing", t1)
	if !again.Conditions[0].LastTransitionTime.Equal(&t0) {
		t.Errorf("transition time moved to %v", again.Conditions[0].LastTransitionTime)
	}
	other := pendingStatus(&first, ReasonConfigMapNotFound, "missing", t1)
	if !other.Conditions[0].LastTransitionTime.Equal(&t1) || other.Conditions[0].Type != ConditionInvalid {
		t.Errorf("a new reason keeps the old time: %+v", other.Conditions[0])
	}
	if clean := pendingStatus(&first, "", "", t1); len(clean.Conditions) != 0 || clean.Phase != v1alpha1.InitializePhasePending {
		t.Errorf("no reason: %+v", clean)
	}
}
