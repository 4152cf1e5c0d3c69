//go:build integration

package faults

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/names"
)

// onPVC judges a PVC the first time it is seen deleting.
func (c *checker) onPVC(obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok || (!deleted && pvc.DeletionTimestamp == nil) {
		return
	}
	c.mu.Lock()
	seen := c.deleting[pvc.UID]
	c.deleting[pvc.UID] = true
	c.mu.Unlock()
	component, pod, found := strings.Cut(pvc.Name, "-")
	ord, err := names.Ordinal(pod)
	if seen || !found || err != nil || (component != "pd" && component != "tikv") {
		return
	}
	if ord >= c.replicas(component) {
		return
	}
	c.check(invPVCKept, c.pdFailoverRebuild(context.Background(), component, pod),
		"PVC %s of wanted member %s deleted (not a PD failover: no failure record, or the member still in PD)", pvc.Name, pod)
}

// pdFailoverRebuild says whether deleting the data PVC of pod (and then pod itself) is a PD failover
// rebuilding that member from an empty volume, which is by design: pd.Hooks.Failover deletes the
// failed member from PD, then its PVC, then its pod, so that the StatefulSet recreates both and the
// member joins again as a new one.
//
// It is judged from what must already hold when the failover deletes them, never from what the
// deleting sync itself writes: the operator writes status once, at the end of the sync
// (failureMembers[].memberDeleted), so the checker always sees the PVC go before that write. The rule
// used to require failureMembers[].pvcUIDSet to name the PVC, a field the operator never fills: every
// PD failover was reported as a violation (kill/pd-failover). What must hold instead:
//   - status records pod as a failed PD member: markFailure records it and ends its sync with a
//     requeue, so the record is written at least one sync before the deletion;
//   - PD no longer has the member ID recorded: the failover deletes the member from PD first.
//
// A PVC deleted without both is still a violation.
func (c *checker) pdFailoverRebuild(ctx context.Context, component, pod string) bool {
	if component != "pd" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tc, err := c.pc.PingcapV1alpha1().TidbClusters(c.env.Namespace).Get(ctx, c.tc, metav1.GetOptions{})
	if err != nil {
		return false
	}
	f, recorded := tc.Status.PD.FailureMembers[pod]
	if !recorded || f.MemberID == "" {
		return false
	}
	st, err := c.state(ctx)
	if err != nil {
		return false
	}
	for _, m := range st.Members {
		if fmt.Sprint(m.MemberID) == f.MemberID {
			return false
		}
	}
	return true
}
