package tidbinitializer

import (
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
)

// ConditionUnsupported names, next to the Job's conditions, the fields ti
// sets that this operator version accepts and does not act on
// (pkg/apis/pingcap/v1alpha1/unsupported); ReasonUnsupported is its reason
// and that of the Warning recorded once per generation.
const (
	ConditionUnsupported batchv1.JobConditionType = "Unsupported"
	ReasonUnsupported    string                   = "Unsupported"
)

// withUnsupported returns st with the Unsupported condition when ti sets a
// field of the registry (and without it otherwise), keeping the condition's
// times while its message stays, and warns once per generation.
func (c *Control) withUnsupported(ti *v1alpha1.TidbInitializer, st v1alpha1.TidbInitializerStatus) v1alpha1.TidbInitializerStatus {
	isUnsupported := func(jc batchv1.JobCondition) bool { return jc.Type == ConditionUnsupported }
	st.Conditions = slices.DeleteFunc(slices.Clone(st.Conditions), isUnsupported)
	fields := unsupported.Fields(unsupported.TidbInitializer, ti)
	if len(fields) == 0 {
		return st
	}
	msg := "accepted but not acted on by this operator version: " + strings.Join(fields, ", ")
	c.unsupported.warnOnce(ti, ReasonUnsupported, msg)
	now := c.now()
	cond := batchv1.JobCondition{Type: ConditionUnsupported, Status: corev1.ConditionTrue, Reason: ReasonUnsupported,
		Message: msg, LastProbeTime: now, LastTransitionTime: now}
	if i := slices.IndexFunc(ti.Status.Conditions, isUnsupported); i >= 0 && ti.Status.Conditions[i].Message == msg {
		cond.LastProbeTime, cond.LastTransitionTime = ti.Status.Conditions[i].LastProbeTime, ti.Status.Conditions[i].LastTransitionTime
	}
	st.Conditions = append(st.Conditions, cond)
	return st
}
