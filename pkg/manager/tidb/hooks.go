package tidb

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// PodHealthy reports whether the pod's status port answered.
func (c *Component) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return tc.Status.TiDB.Members[podName].Health
}

// Traits says: TiDB's rollout waits while PD, TiKV, TiFlash or Pump scale or
// upgrade (spec §6.3), as TiDB restarts on top of a changing storage layer
// add failures; a TiDB server needs no decommissioning to scale in.
func (c *Component) Traits() component.Traits {
	return component.Traits{
		UpgradeBlockers: []string{names.PD, names.TiKV, names.TiFlash, names.Pump},
		FreeScaleIn:     true,
	}
}

// NotReady reports TiDBUnhealthy while fewer servers answer than desired.
func (c *Component) NotReady(tc *v1alpha1.TidbCluster) (reason, message string) {
	healthy := 0
	for _, m := range tc.Status.TiDB.Members {
		if m.Health {
			healthy++
		}
	}
	if healthy < int(tc.Spec.TiDB.Replicas) {
		return "TiDBUnhealthy", fmt.Sprintf("TiDB(s) are not healthy: %d of %d", healthy, tc.Spec.TiDB.Replicas)
	}
	return "", ""
}

// ScaleOutStep is spec.tidb.scalePolicy.scaleOutParallelism.
func (c *Component) ScaleOutStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiDB.ScalePolicy.ScaleOutParallelism; p != nil {
		return *p
	}
	return 1
}

// FailoverReplicas is one extra server per recorded failure.
func (c *Component) FailoverReplicas(tc *v1alpha1.TidbCluster) int32 {
	return int32(len(tc.Status.TiDB.FailureMembers)) //nolint:gosec // bounded by maxFailoverCount
}

// Failover recovers automatically once every desired server is healthy
// (the extra servers are then scaled in), forgets failures whose member is
// healthy again, and records at most one new failure per sync: a server of
// a desired ordinal unhealthy for longer than the grace period.
func (c *Component) Failover(_ context.Context, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.TiDB
	replicas := tc.Spec.TiDB.Replicas
	if allHealthy(tc, replicas) {
		if len(s.FailureMembers) > 0 {
			c.recorder.Eventf(tc, corev1.EventTypeNormal, "Recovery", "every TiDB server is healthy again; removing %d failover server(s)", len(s.FailureMembers))
		}
		s.FailureMembers = nil
		return nil
	}
	for pod := range s.FailureMembers {
		if s.Members[pod].Health {
			delete(s.FailureMembers, pod)
		}
	}
	if !c.failover.Enabled || int32(len(s.FailureMembers)) >= component.MaxFailover(tc.Spec.TiDB.MaxFailoverCount) { //nolint:gosec // small
		return nil
	}
	now := c.clock.Now()
	for o := int32(0); o < replicas; o++ {
		pod := names.Pod(tc.Name, names.TiDB, o)
		m, known := s.Members[pod]
		if _, recorded := s.FailureMembers[pod]; recorded || !known || m.Health ||
			!component.Expired(m.LastTransitionTime.Time, c.failover.Period, now) {
			continue
		}
		if s.FailureMembers == nil {
			s.FailureMembers = map[string]v1alpha1.TiDBFailureMember{}
		}
		s.FailureMembers[pod] = v1alpha1.TiDBFailureMember{PodName: pod, CreatedAt: metav1.NewTime(now)}
		c.recorder.Event(tc, corev1.EventTypeWarning, "Unhealthy", fmt.Sprintf("tidb pod[%s] is unhealthy; adding a failover server", pod))
		return nil
	}
	return nil
}

func allHealthy(tc *v1alpha1.TidbCluster, replicas int32) bool {
	for o := int32(0); o < replicas; o++ {
		if !tc.Status.TiDB.Members[names.Pod(tc.Name, names.TiDB, o)].Health {
			return false
		}
	}
	return true
}
