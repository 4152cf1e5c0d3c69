package tidb

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Hooks are TiDB's lifecycle hooks. TiDB servers keep no data, so a pod may
// be removed or restarted without preparation, and failover simply adds a
// server for each one unhealthy past the grace period.
type Hooks struct {
	failover component.FailoverConfig
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// NewHooks returns TiDB's hooks.
func NewHooks(cfg component.FailoverConfig, recorder record.EventRecorder, clk clock.PassiveClock) *Hooks {
	return &Hooks{failover: cfg, recorder: recorder, clock: clk}
}

var _ component.Hooks = (*Hooks)(nil)

// PreScaleIn returns nil: a TiDB server needs no decommissioning.
func (h *Hooks) PreScaleIn(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PreUpgradePod returns nil: TiDB shuts down gracefully on SIGTERM.
func (h *Hooks) PreUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PostUpgradePod returns nil: there is nothing to undo.
func (h *Hooks) PostUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// EndUpgrade returns nil: a TiDB rollout leaves nothing behind.
func (h *Hooks) EndUpgrade(context.Context, *v1alpha1.TidbCluster) error { return nil }

// PodHealthy reports whether the pod's status port answered.
func (h *Hooks) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return tc.Status.TiDB.Members[podName].Health
}

// UpgradeBlocker holds TiDB's rollout while PD or TiKV scale or upgrade,
// because TiDB restarts on top of a changing storage layer add failures.
func (h *Hooks) UpgradeBlocker(tc *v1alpha1.TidbCluster) string {
	return component.BlockedBy(tc, "pd", "tikv")
}

// ForceUpgrade is never needed for TiDB.
func (h *Hooks) ForceUpgrade(*v1alpha1.TidbCluster) bool { return false }

// ScaleOutStep is spec.tidb.scalePolicy.scaleOutParallelism.
func (h *Hooks) ScaleOutStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiDB.ScalePolicy.ScaleOutParallelism; p != nil {
		return *p
	}
	return 1
}

// FailoverReplicas is one extra server per recorded failure.
func (h *Hooks) FailoverReplicas(tc *v1alpha1.TidbCluster) int32 {
	return int32(len(tc.Status.TiDB.FailureMembers)) //nolint:gosec // bounded by maxFailoverCount
}

// Failover recovers automatically once every desired server is healthy
// (the extra servers are then scaled in), forgets failures whose member is
// healthy again, and records at most one new failure per sync: a server of
// a desired ordinal unhealthy for longer than the grace period.
func (h *Hooks) Failover(_ context.Context, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.TiDB
	replicas := tc.Spec.TiDB.Replicas
	if allHealthy(tc, replicas) {
		if len(s.FailureMembers) > 0 {
			h.recorder.Eventf(tc, corev1.EventTypeNormal, "Recovery", "every TiDB server is healthy again; removing %d failover server(s)", len(s.FailureMembers))
		}
		s.FailureMembers = nil
		return nil
	}
	for pod := range s.FailureMembers {
		if s.Members[pod].Health {
			delete(s.FailureMembers, pod)
		}
	}
	if !h.failover.Enabled || int32(len(s.FailureMembers)) >= component.MaxFailover(tc.Spec.TiDB.MaxFailoverCount) { //nolint:gosec // small
		return nil
	}
	now := h.clock.Now()
	for o := int32(0); o < replicas; o++ {
		pod := names.Pod(tc.Name, names.TiDB, o)
		m, known := s.Members[pod]
		if _, recorded := s.FailureMembers[pod]; recorded || !known || m.Health ||
			!component.Expired(m.LastTransitionTime.Time, h.failover.Period, now) {
			continue
		}
		if s.FailureMembers == nil {
			s.FailureMembers = map[string]v1alpha1.TiDBFailureMember{}
		}
		s.FailureMembers[pod] = v1alpha1.TiDBFailureMember{PodName: pod, CreatedAt: metav1.NewTime(now)}
		h.recorder.Event(tc, corev1.EventTypeWarning, "Unhealthy", fmt.Sprintf("tidb pod[%s] is unhealthy; adding a failover server", pod))
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
