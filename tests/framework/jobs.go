package framework

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// FailJob marks the Job name of env's namespace Failed as the Job controller does at its
// backoffLimit (KWOK runs no Job pods); it fails the test when the status cannot be written.
func FailJob(t *testing.T, env *Env, name string) {
	t.Helper()
	jobs := env.Kube.BatchV1().Jobs(env.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := jobs.Get(env.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		if j.Status.StartTime == nil {
			j.Status.StartTime = &now
		}
		j.Status.Active = 0
		j.Status.Conditions = append(j.Status.Conditions,
			batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
				Message: "Job has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now},
			batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
				Message: "Job has reached the specified backoff limit", LastProbeTime: now, LastTransitionTime: now})
		_, err = jobs.UpdateStatus(env.Ctx, j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("fail Job %s: %v", name, err)
	}
}
