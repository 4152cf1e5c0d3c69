package tidbcluster

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// Reasons of the Ready, Progressing and Degraded conditions. The Ready
// reasons are the TiDB Operator's, so dashboards and scripts keep working.
const (
	ReasonReady                  = "Ready"
	ReasonStatefulSetNotUpToDate = "StatefulSetNotUpToDate"
	ReasonPDUnhealthy            = "PDUnhealthy"
	ReasonTiKVStoreNotUp         = "TiKVStoreNotUp"
	ReasonTiDBUnhealthy          = "TiDBUnhealthy"
	ReasonTiFlashStoreNotUp      = "TiFlashStoreNotUp"
	ReasonDataVolumeDeleting     = "DataVolumeDeleting"
	ReasonInvalidSpec            = "InvalidSpec"
	ReasonSyncError              = "SyncError"
	ReasonAsExpected             = "AsExpected"
	ReasonConverged              = "Converged"
	ReasonReconciling            = "Reconciling"
	ReasonPaused                 = "Paused"
	// ReasonSuspended: spec.suspendAction asks for suspended StatefulSets (Ready while
	// components are suspended, Progressing until every one is).
	ReasonSuspended = "Suspended"
)

// readyCondition evaluates Ready from the observed status: every present
// component's StatefulSet up to date, no data volume being deleted, then
// each component's own readiness (PDUnhealthy, TiKVStoreNotUp …), in sync
// order. Only registered components (comps) count: one nothing runs never
// holds Ready back; the Unsupported condition names it instead. It only
// reads; the caller sets the condition.
func readyCondition(tc *v1alpha1.TidbCluster, comps []component.Component[*v1alpha1.TidbCluster]) metav1.Condition {
	notReady := func(reason, msg string) metav1.Condition {
		return metav1.Condition{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	}
	var present []component.Component[*v1alpha1.TidbCluster]
	for _, c := range comps {
		if c.Enabled(tc) {
			present = append(present, c)
		}
	}
	if suspended, all := suspendedComponents(tc, present); len(suspended) > 0 {
		state := "being suspended"
		if all {
			state = "suspended"
		}
		return notReady(ReasonSuspended, fmt.Sprintf("spec.suspendAction: %s; suspended so far: %s",
			state, strings.Join(suspended, ", ")))
	}
	if name, ok := statefulSetsUpToDate(tc, present); !ok {
		return notReady(ReasonStatefulSetNotUpToDate, fmt.Sprintf("Statefulset(s) are in progress: %s", name))
	}
	for _, c := range present {
		st := c.Status(tc)
		if cond := meta.FindStatusCondition(st.Conditions, v1alpha1.ComponentDataVolumeDeleting); cond != nil && cond.Status == metav1.ConditionTrue {
			return notReady(ReasonDataVolumeDeleting, cond.Message)
		}
	}
	for _, c := range present {
		if r, ok := c.(component.ReadinessReporter[*v1alpha1.TidbCluster]); ok {
			if reason, msg := r.NotReady(tc); reason != "" {
				return notReady(reason, msg)
			}
		}
	}
	return metav1.Condition{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionTrue,
		Reason: ReasonReady, Message: "TiDB cluster is fully up and running"}
}

// fullySuspended reports whether some enabled component is suspended and
// every one asked to be is.
func fullySuspended(tc *v1alpha1.TidbCluster, comps []component.Component[*v1alpha1.TidbCluster]) bool {
	var present []component.Component[*v1alpha1.TidbCluster]
	for _, c := range comps {
		if c.Enabled(tc) {
			present = append(present, c)
		}
	}
	suspended, all := suspendedComponents(tc, present)
	return len(suspended) > 0 && all
}

// suspendedComponents names the present components in phase Suspend and
// reports whether every present one asked to be suspended is.
func suspendedComponents(tc *v1alpha1.TidbCluster, present []component.Component[*v1alpha1.TidbCluster]) ([]string, bool) {
	var names []string
	all := true
	for _, c := range present {
		switch {
		case c.Status(tc).Phase == v1alpha1.SuspendPhase:
			names = append(names, c.Name())
		case component.Suspended(tc, c.Name()):
			all = false
		}
	}
	return names, all
}

// statefulSetsUpToDate reports whether every present component's
// StatefulSet exists and has rolled out its update revision; it names the
// first that has not.
func statefulSetsUpToDate(tc *v1alpha1.TidbCluster, present []component.Component[*v1alpha1.TidbCluster]) (string, bool) {
	for _, c := range present {
		// Scale: replicas differ from the desired ones (a scale-in waiting
		// for its store to leave, say); Upgrade: a rollout is due or running
		// (also before the StatefulSet shows a new revision). Neither is a
		// settled cluster.
		status := c.Status(tc)
		sts := status.StatefulSet
		if sts == nil || sts.CurrentRevision != sts.UpdateRevision ||
			status.Phase == v1alpha1.ScalePhase || status.Phase == v1alpha1.UpgradePhase {
			return c.Name(), false
		}
	}
	return "", true
}

// setCondition sets cond on conds with the observed generation; the
// transition time changes only when the status changes.
func setCondition(conds *[]metav1.Condition, cond metav1.Condition, generation int64) {
	cond.ObservedGeneration = generation
	meta.SetStatusCondition(conds, cond)
}
