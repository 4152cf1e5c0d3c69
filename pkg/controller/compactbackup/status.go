package compactbackup

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
)

// Condition types this operator adds to a CompactBackup's status (v1.6 has
// none: state is its lifecycle).
const (
	// ConditionInvalid is True while the spec cannot run.
	ConditionInvalid = "Invalid"
	// ConditionUnsupported is True while the spec sets fields accepted and not acted on.
	ConditionUnsupported = "Unsupported"
)

// invalidMessage is the message of cb's True Invalid condition, "" for none.
func invalidMessage(cb *v1alpha1.CompactBackup) string {
	if c := meta.FindStatusCondition(cb.Status.Conditions, ConditionInvalid); c != nil && c.Status == metav1.ConditionTrue {
		return c.Message
	}
	return ""
}

// unsupportedMessage names the fields cb sets that nothing acts on; "" for none.
func unsupportedMessage(cb *v1alpha1.CompactBackup) string {
	fields := unsupported.Fields(unsupported.CompactBackup, cb)
	if len(fields) == 0 {
		return ""
	}
	return "accepted but not acted on by this operator version: " + strings.Join(fields, ", ")
}

// statusFor returns the status cb should have for the validation verdict
// message ("" when valid) and unsupportedMsg: invalid ⇒ Invalid True, state
// Failed and the errors as message (v1.6's OnSchedule failure); valid again
// after an Invalid ⇒ the condition gone and state cleared, so that the
// compaction is scheduled; Unsupported True while fields are named. Pure.
func statusFor(st *v1alpha1.CompactStatus, message, unsupportedMsg string, gen int64, now metav1.Time) *v1alpha1.CompactStatus {
	out := st.DeepCopy()
	set := func(t, msg, reason string) {
		meta.SetStatusCondition(&out.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason,
			Message: msg, ObservedGeneration: gen, LastTransitionTime: now})
	}
	wasInvalid := meta.IsStatusConditionTrue(st.Conditions, ConditionInvalid)
	switch {
	case message != "":
		set(ConditionInvalid, message, backup.ReasonInvalidSpec)
		out.State, out.Message = v1alpha1.CompactFailed, message
	case wasInvalid:
		meta.RemoveStatusCondition(&out.Conditions, ConditionInvalid)
		if out.State == v1alpha1.CompactFailed {
			out.State, out.Message = "", ""
		}
	}
	if unsupportedMsg != "" {
		set(ConditionUnsupported, unsupportedMsg, backup.ReasonUnsupported)
	} else {
		meta.RemoveStatusCondition(&out.Conditions, ConditionUnsupported)
	}
	if len(out.Conditions) == 0 {
		out.Conditions = nil
	}
	return out
}

// syncConditions writes the status statusFor computes when it differs from
// cb's, through the status subresource (guarded by resourceVersion: a
// conflict is returned and retried by the worker with a fresh read), and
// reports whether it wrote.
func syncConditions(ctx context.Context, client versioned.Interface, cb *v1alpha1.CompactBackup, message, unsupportedMsg string,
	now metav1.Time) (bool, error) {
	want := statusFor(&cb.Status, message, unsupportedMsg, cb.Generation, now)
	if equalStatus(&cb.Status, want) {
		return false, nil
	}
	cp := cb.DeepCopy()
	cp.Status = *want
	if _, err := client.PingcapV1alpha1().CompactBackups(cb.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("write the conditions of CompactBackup %s/%s: %w", cb.Namespace, cb.Name, err)
	}
	return true, nil
}

// equalStatus compares a and b ignoring the transition times meta keeps
// for unchanged conditions.
func equalStatus(a, b *v1alpha1.CompactStatus) bool {
	if a.State != b.State || a.Message != b.Message || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}
