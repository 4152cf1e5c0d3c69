package workload

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setUnsupported sets the Unsupported condition naming r.Unsupported (False
// when the list is empty) and records one Warning each time the list or the
// generation changes, as the TidbCluster controller does.
func (s *Syncer) setUnsupported(st *Status, prev Status, r Request) {
	if s.PVsDenied != "" && len(r.PodLabels) > 0 {
		r.Unsupported = append(slices.Clone(r.Unsupported), s.PVsDenied)
	}
	if len(r.Unsupported) == 0 {
		if meta.FindStatusCondition(st.Conditions, ConditionUnsupported) != nil {
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionUnsupported,
				Status: metav1.ConditionFalse, Reason: ReasonAllSupported, Message: "every field set is acted on",
				ObservedGeneration: st.ObservedGeneration})
		}
		return
	}
	msg := "accepted but not acted on: " + strings.Join(r.Unsupported, ", ")
	old := meta.FindStatusCondition(prev.Conditions, ConditionUnsupported)
	if old == nil || old.Status != metav1.ConditionTrue || old.Message != msg || old.ObservedGeneration != st.ObservedGeneration {
		s.Recorder.Event(r.Owner, corev1.EventTypeWarning, ReasonUnsupported, msg)
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionUnsupported, Status: metav1.ConditionTrue,
		Reason: ReasonUnsupported, Message: msg, ObservedGeneration: st.ObservedGeneration})
}
