package tidbcluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
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
)

// readyCondition evaluates Ready from the observed status in the TiDB
// Operator's order: StatefulSets up to date, then PD, TiKV, TiDB, TiFlash.
// A component no Component runs (not in built) never holds Ready back: the
// Unsupported condition names it instead. It only reads; the caller sets
// the condition.
func readyCondition(tc *v1alpha1.TidbCluster, built map[string]bool) metav1.Condition {
	notReady := func(reason, msg string) metav1.Condition {
		return metav1.Condition{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionFalse, Reason: reason, Message: msg}
	}
	if name, ok := statefulSetsUpToDate(tc, built); !ok {
		return notReady(ReasonStatefulSetNotUpToDate, fmt.Sprintf("Statefulset(s) are in progress: %s", name))
	}
	for _, st := range []*v1alpha1.ComponentStatus{&tc.Status.PD.ComponentStatus, &tc.Status.TiKV.ComponentStatus,
		&tc.Status.TiDB.ComponentStatus, &tc.Status.TiFlash.ComponentStatus} {
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ComponentDataVolumeDeleting); c != nil && c.Status == metav1.ConditionTrue {
			return notReady(ReasonDataVolumeDeleting, c.Message)
		}
	}
	if pd := tc.Spec.PD; pd != nil {
		if healthy := healthyPDMembers(tc); healthy != int(pd.Replicas) {
			return notReady(ReasonPDUnhealthy, fmt.Sprintf("PD(s) are not healthy: %d of %d", healthy, pd.Replicas))
		}
	}
	if kv := tc.Spec.TiKV; kv != nil {
		if up := upStores(tc.Status.TiKV.Stores); up < int(kv.Replicas) {
			return notReady(ReasonTiKVStoreNotUp, fmt.Sprintf("TiKV store(s) are not up: %d of %d", up, kv.Replicas))
		}
	}
	if db := tc.Spec.TiDB; db != nil {
		if healthy := healthyTiDBMembers(tc); healthy < int(db.Replicas) {
			return notReady(ReasonTiDBUnhealthy, fmt.Sprintf("TiDB(s) are not healthy: %d of %d", healthy, db.Replicas))
		}
	}
	if tf := tc.Spec.TiFlash; tf != nil && built["tiflash"] {
		if up := upStores(tc.Status.TiFlash.Stores); up < int(tf.Replicas) {
			return notReady(ReasonTiFlashStoreNotUp, fmt.Sprintf("TiFlash store(s) are not up: %d of %d", up, tf.Replicas))
		}
	}
	return metav1.Condition{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionTrue,
		Reason: ReasonReady, Message: "TiDB cluster is fully up and running"}
}

// statefulSetsUpToDate reports whether every present and built component's
// StatefulSet exists and has rolled out its update revision; it names the
// first that has not.
func statefulSetsUpToDate(tc *v1alpha1.TidbCluster, built map[string]bool) (string, bool) {
	checks := []struct {
		name    string
		present bool
		status  *v1alpha1.ComponentStatus
	}{
		{"pd", tc.Spec.PD != nil, &tc.Status.PD.ComponentStatus},
		{"tikv", tc.Spec.TiKV != nil, &tc.Status.TiKV.ComponentStatus},
		{"tidb", tc.Spec.TiDB != nil, &tc.Status.TiDB.ComponentStatus},
		{"tiflash", tc.Spec.TiFlash != nil, &tc.Status.TiFlash.ComponentStatus},
	}
	for _, c := range checks {
		if !c.present || !built[c.name] {
			continue
		}
		// Scale: replicas differ from the desired ones (a scale-in waiting
		// for its store to leave, say); Upgrade: a rollout is due or running
		// (also before the StatefulSet shows a new revision). Neither is a
		// settled cluster.
		sts := c.status.StatefulSet
		if sts == nil || sts.CurrentRevision != sts.UpdateRevision ||
			c.status.Phase == v1alpha1.ScalePhase || c.status.Phase == v1alpha1.UpgradePhase {
			return c.name, false
		}
	}
	return "", true
}

func healthyPDMembers(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.PD.Members {
		if m.Health {
			n++
		}
	}
	return n
}

func healthyTiDBMembers(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.TiDB.Members {
		if m.Health {
			n++
		}
	}
	return n
}

func upStores(stores map[string]v1alpha1.TiKVStore) int {
	n := 0
	for _, s := range stores {
		if s.State == "Up" {
			n++
		}
	}
	return n
}

// setCondition sets cond on conds with the observed generation; the
// transition time changes only when the status changes.
func setCondition(conds *[]metav1.Condition, cond metav1.Condition, generation int64) {
	cond.ObservedGeneration = generation
	meta.SetStatusCondition(conds, cond)
}
