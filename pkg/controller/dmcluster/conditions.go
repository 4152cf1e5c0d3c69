package dmcluster

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// The Ready condition's reasons, as the TiDB Operator v1.6 words them
// (a dm-worker that is not up reuses DMMasterUnhealthy there too).
const (
	ReasonStatefulSetNotUpToDate = "StatefulSetNotUpToDate"
	ReasonDMMasterUnhealthy      = "DMMasterUnhealthy"
	ReasonReady                  = "Ready"
)

// setReady sets dc's Ready condition from its status, in v1.6's order:
// StatefulSets rolled out, every dm-master member healthy, every desired
// dm-worker registered and not offline. The transition time is kept while
// the status stays.
func setReady(dc *v1alpha1.DMCluster) {
	status, reason, msg := metav1.ConditionTrue, ReasonReady, "DM cluster is fully up and running"
	m, w := &dc.Status.Master, &dc.Status.Worker
	switch {
	case !upToDate(m.StatefulSet) || (dc.Spec.Worker != nil && w.StatefulSet != nil && !upToDate(w.StatefulSet)):
		status, reason, msg = metav1.ConditionFalse, ReasonStatefulSetNotUpToDate, "Statefulset(s) are in progress"
	case !mastersHealthy(dc):
		status, reason, msg = metav1.ConditionFalse, ReasonDMMasterUnhealthy, "dm-master(s) are not healthy"
	case dc.Spec.Worker != nil && !workersUp(dc):
		status, reason, msg = metav1.ConditionFalse, ReasonDMMasterUnhealthy, "some dm-worker(s) are not up yet"
	}
	meta.SetStatusCondition(&dc.Status.Conditions, metav1.Condition{Type: "Ready", Status: status, Reason: reason,
		Message: msg, ObservedGeneration: dc.Generation})
}

// upToDate reports whether a StatefulSet status shows its rollout done.
func upToDate(sts *appsv1.StatefulSetStatus) bool {
	return sts != nil && sts.CurrentRevision == sts.UpdateRevision
}

// mastersHealthy reports whether dm-master lists as many members as the
// StatefulSet runs pods and every one is alive.
func mastersHealthy(dc *v1alpha1.DMCluster) bool {
	m := &dc.Status.Master
	if len(m.Members) != int(dc.Spec.Master.Replicas)+len(m.FailureMembers) {
		return false
	}
	for _, mem := range m.Members {
		if !mem.Health {
			return false
		}
	}
	return true
}

// workersUp reports whether every desired dm-worker is registered and none
// is offline.
func workersUp(dc *v1alpha1.DMCluster) bool {
	w := &dc.Status.Worker
	if len(w.Members) != int(dc.Spec.Worker.Replicas)+len(w.FailureMembers) {
		return false
	}
	for _, mem := range w.Members {
		if mem.Stage == v1alpha1.DMWorkerStateOffline {
			return false
		}
	}
	return true
}
