package dmworker

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// ReasonUnhealthy (Warning) is recorded when an offline worker is marked failed.
const ReasonUnhealthy = "Unhealthy"

var _ component.FailoverHandler[owner] = (*Component)(nil)

// FailoverReplicas is one extra worker per failure member: a failed worker
// is replaced by an extra pod, nothing is deleted (spec dm.md §9).
func (c *Component) FailoverReplicas(dc owner) int32 {
	return int32(len(dc.Status.Worker.FailureMembers)) //nolint:gosec // a small count
}

// Failover drops failure records of ordinals no longer desired, recovers
// (clears the records and failoverUID) once every desired worker is up
// again and recovery is asked (spec.worker.recoverFailover, or
// failover.recoverByUID naming this failover), and, with --auto-failover
// and maxFailoverCount > 0, once every pod started, records each desired
// worker offline for longer than the period, up to maxFailoverCount. It
// never errors; a new record asks for a requeue.
func (c *Component) Failover(_ context.Context, dc owner) error {
	st, ws := &dc.Status.Worker, dc.Spec.Worker
	for pod := range st.FailureMembers {
		if !desiredOrdinal(dc, pod) {
			delete(st.FailureMembers, pod)
		}
	}
	if len(st.FailureMembers) > 0 && recoveryAsked(dc) && allUp(dc) {
		st.FailureMembers, st.FailoverUID = nil, ""
		return nil
	}
	limit := component.MaxFailover(ws.MaxFailoverCount)
	if !c.failover.Enabled || limit <= 0 || !st.Synced || st.StatefulSet == nil ||
		st.StatefulSet.Replicas != ws.Replicas+c.FailoverReplicas(dc) || allUp(dc) {
		return nil
	}
	now := c.clock.Now()
	marked := ""
	for o := range ws.Replicas {
		pod := names.DMWorkerPod(dc.Name, o)
		m, ok := st.Members[pod]
		if !ok || m.Stage != dmapi.StageOffline || !component.Expired(m.LastTransitionTime.Time, c.failover.Period, now) {
			continue
		}
		if st.FailoverUID == "" {
			st.FailoverUID = uuid.NewUUID()
		}
		if _, recorded := st.FailureMembers[pod]; recorded || int32(len(st.FailureMembers)) >= limit { //nolint:gosec // a small count
			continue
		}
		if st.FailureMembers == nil {
			st.FailureMembers = map[string]v1alpha1.WorkerFailureMember{}
		}
		st.FailureMembers[pod] = v1alpha1.WorkerFailureMember{PodName: pod, CreatedAt: metav1.NewTime(now)}
		c.eventf(dc, corev1.EventTypeWarning, ReasonUnhealthy, "worker pod[%s] is unhealthy, msg:worker[%s/%s] is Offline", pod, dc.Namespace, pod)
		marked = pod
	}
	if marked != "" {
		return flow.Requeue("dm-worker %s is offline; adding a replacement", marked)
	}
	return nil
}

func (c *Component) eventf(dc owner, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(dc, eventType, reason, format, args...)
	}
}

// recoveryAsked: spec.worker.recoverFailover, or recoverByUID naming the current failover.
func recoveryAsked(dc owner) bool {
	ws := dc.Spec.Worker
	return ws.RecoverFailover || ws.Failover != nil && ws.Failover.RecoverByUID != "" &&
		ws.Failover.RecoverByUID == dc.Status.Worker.FailoverUID
}

// allUp reports whether every desired worker is registered and not offline,
// and the StatefulSet has as many Ready pods.
func allUp(dc owner) bool {
	st, n := &dc.Status.Worker, dc.Spec.Worker.Replicas
	if !component.PodsReady(&st.ComponentStatus, n) {
		return false
	}
	for o := range n {
		m, ok := st.Members[names.DMWorkerPod(dc.Name, o)]
		if !ok || m.Stage == dmapi.StageOffline {
			return false
		}
	}
	return true
}

// desiredOrdinal reports whether pod's ordinal is below spec.worker.replicas.
func desiredOrdinal(dc owner, pod string) bool {
	o, err := strconv.Atoi(strings.TrimPrefix(pod, names.DMWorker(dc.Name)+"-"))
	return err == nil && o < int(dc.Spec.Worker.Replicas)
}
