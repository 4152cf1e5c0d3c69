package tidbcluster

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// ReasonUnknownFields is the reason of the Warning event, and of a Degraded
// condition, that name the spec's fields inside pass-through Kubernetes
// types (affinity, additionalContainers …) that those types do not know:
// the API server stored them, the operator never sees them.
const ReasonUnknownFields = controller.ReasonUnknownFields

// reportUnknownFields names tc.UnknownFields (the decoder's list) in the
// Degraded condition setConditions computed — Degraded=True with reason
// UnknownFields after a sync without error, appended to the message of a
// sync error — and records one Warning event at the first sync of each
// generation (the status last written observed an older one; a failed
// status write brings a second). An invalid spec keeps its Degraded
// message, which validate compares to decide its own event; the Warning
// event still names the fields. The fields never stop the sync: the rest of
// the spec is acted on.
func (c *defaultControl) reportUnknownFields(tc *v1alpha1.TidbCluster, original *v1alpha1.TidbClusterStatus) {
	if len(tc.UnknownFields) == 0 {
		return
	}
	msg := controller.UnknownFieldsMessage(tc.UnknownFields)
	if original.ObservedGeneration != tc.Generation {
		c.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonUnknownFields, "%s", msg)
	}
	degraded := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterDegraded)
	if degraded == nil || degraded.Reason == ReasonInvalidSpec || strings.Contains(degraded.Message, msg) {
		return
	}
	cond := *degraded
	if cond.Status == metav1.ConditionTrue {
		cond.Message += "; " + msg
	} else {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonUnknownFields, msg
	}
	setCondition(&tc.Status.Conditions, cond, tc.Generation)
}
