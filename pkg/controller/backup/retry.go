package backup

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Defaults of backoffRetryPolicy (spec §9), used when a value does not parse.
const (
	defaultMinRetryDuration = 300 * time.Second
	defaultRetryTimeout     = 30 * time.Minute
)

// retryPolicy is a parsed backoffRetryPolicy. maxRetries 0 never retries.
type retryPolicy struct {
	minDelay   time.Duration
	maxRetries int
	timeout    time.Duration
}

// parseRetryPolicy reads p (already defaulted); a duration that does not
// parse (validation rejects it) falls back to its default.
func parseRetryPolicy(p v1alpha1.BackoffRetryPolicy) retryPolicy {
	out := retryPolicy{minDelay: defaultMinRetryDuration, maxRetries: p.MaxRetryTimes, timeout: defaultRetryTimeout}
	if d, err := time.ParseDuration(p.MinRetryDuration); err == nil && d >= 0 {
		out.minDelay = d
	}
	if d, err := time.ParseDuration(p.RetryTimeout); err == nil && d > 0 {
		out.timeout = d
	}
	return out
}

// pendingRetry returns the last retry record when its retry has not
// happened yet (realRetryAt unset), else nil.
func pendingRetry(records []v1alpha1.BackoffRetryRecord) *v1alpha1.BackoffRetryRecord {
	if n := len(records); n > 0 && records[n-1].RealRetryAt == nil {
		return &records[n-1]
	}
	return nil
}

// realizedRetries counts the retries that happened: the retry number the
// current backup Job should carry (0 for the first run).
func realizedRetries(records []v1alpha1.BackoffRetryRecord) int {
	n := 0
	for _, r := range records {
		if r.RealRetryAt != nil {
			n++
		}
	}
	return n
}

// nextRetry decides what a failure detected at now leads to, given the
// retries recorded so far: the record of the next retry, due minDelay·2^n
// after now for the (n+1)th retry; or, when maxRetryTimes retries happened
// or that retry would fall after retryTimeout (counted from the first
// detected failure), why it gives up. Pure.
func nextRetry(records []v1alpha1.BackoffRetryRecord, p retryPolicy, now time.Time, reason string) (*v1alpha1.BackoffRetryRecord, string) {
	n := len(records)
	if n >= p.maxRetries {
		return nil, fmt.Sprintf("retried %d of %d times (backoffRetryPolicy.maxRetryTimes)", n, p.maxRetries)
	}
	first := now
	if n > 0 && records[0].DetectFailedAt != nil {
		first = records[0].DetectFailedAt.Time
	}
	expected := now.Add(p.minDelay << n)
	if expected.Sub(first) > p.timeout {
		return nil, fmt.Sprintf("retry %d would start at %s, past backoffRetryPolicy.retryTimeout %s after the first failure",
			n+1, expected.UTC().Format(time.RFC3339), p.timeout)
	}
	at, due := metav1.NewTime(now), metav1.NewTime(expected)
	return &v1alpha1.BackoffRetryRecord{
		RetryNum: n + 1, DetectFailedAt: &at, ExpectedRetryAt: &due,
		RetryReason: reason, OriginalReason: reason,
	}, ""
}

// jobCondition returns j's condition of type t when it is True, else nil.
func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// jobFailed returns j's Failed condition, or nil while it has not failed.
func jobFailed(j *batchv1.Job) *batchv1.JobCondition { return jobCondition(j, batchv1.JobFailed) }

// jobComplete reports whether j succeeded.
func jobComplete(j *batchv1.Job) bool { return jobCondition(j, batchv1.JobComplete) != nil }

// jobFinished reports whether j succeeded or failed.
func jobFinished(j *batchv1.Job) bool { return jobComplete(j) || jobFailed(j) != nil }

// annotationInt reads the integer annotation key of j; 0 when absent or unreadable.
func annotationInt(j *batchv1.Job, key string) int {
	n, err := strconv.Atoi(j.Annotations[key])
	if err != nil {
		return 0
	}
	return n
}

// jobFailure is the reason and message of a failed Job's condition.
func jobFailure(reason, message string) (string, string) {
	if reason == "" {
		reason = "JobFailed"
	}
	return reason, fmt.Sprintf("the Job failed (%s): %s", reason, message)
}
