package tidbinitializer

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// ConditionInvalid is the condition a TidbInitializer without a Job carries
// while it cannot get one: its spec is invalid, or the cluster, Secret or
// ConfigMap it names is missing (the reason says which). Once the Job
// exists, the conditions are the Job's.
const ConditionInvalid batchv1.JobConditionType = "Invalid"

// jobPhase returns the phase a Job stands for: Completed or Failed once its
// Complete or Failed condition is True (final), Running while it has an
// active pod, Pending before.
func jobPhase(job *batchv1.Job) v1alpha1.InitializePhase {
	switch {
	case hasCondition(job, batchv1.JobComplete):
		return v1alpha1.InitializePhaseCompleted
	case hasCondition(job, batchv1.JobFailed):
		return v1alpha1.InitializePhaseFailed
	case job.Status.Active > 0:
		return v1alpha1.InitializePhaseRunning
	}
	return v1alpha1.InitializePhasePending
}

func hasCondition(job *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// mirrorStatus returns the status a TidbInitializer with Job job has: the
// Job's status and its phase.
func mirrorStatus(job *batchv1.Job) v1alpha1.TidbInitializerStatus {
	return v1alpha1.TidbInitializerStatus{JobStatus: *job.Status.DeepCopy(), Phase: jobPhase(job)}
}

// pendingStatus returns the status of a TidbInitializer without a Job:
// phase Pending, and the Invalid condition when reason is set (its
// transition time kept from old when the reason and message are the same,
// so that a repeated sync writes nothing).
func pendingStatus(old *v1alpha1.TidbInitializerStatus, reason, message string, now metav1.Time) v1alpha1.TidbInitializerStatus {
	st := v1alpha1.TidbInitializerStatus{Phase: v1alpha1.InitializePhasePending}
	if reason == "" {
		return st
	}
	c := batchv1.JobCondition{Type: ConditionInvalid, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		LastProbeTime: now, LastTransitionTime: now}
	for _, o := range old.Conditions {
		if o.Type == ConditionInvalid && o.Status == c.Status && o.Reason == reason && o.Message == message {
			c.LastProbeTime, c.LastTransitionTime = o.LastProbeTime, o.LastTransitionTime
		}
	}
	st.Conditions = []batchv1.JobCondition{c}
	return st
}
