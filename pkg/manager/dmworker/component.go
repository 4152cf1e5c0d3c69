package dmworker

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/dmmaster"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// WaitingForMaster is the Gate's answer until dm-master is available.
const WaitingForMaster = "waiting for dm-master cluster running"

// Component is dm-worker as the skeleton sees it.
type Component struct {
	ctl      dmapi.Control
	clock    clock.PassiveClock
	recorder record.EventRecorder
	failover component.FailoverConfig
}

// New returns dm-worker asking ctl (nil asks nothing), timing stage
// transitions by env.Clock (nil is the real clock), recording events on
// env.Recorder (nil records none), failing over as env.Failover("dm-worker")
// says (--auto-failover, --dm-worker-failover-period).
func New(ctl dmapi.Control, env *component.Env) *Component {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Component{ctl: ctl, clock: clk, recorder: env.Recorder, failover: env.Failover(names.DMWorkerComponent)}
}

type owner = *v1alpha1.DMCluster

var (
	_ component.Component[owner]         = (*Component)(nil)
	_ component.Gated[owner]             = (*Component)(nil)
	_ component.Observer[owner]          = (*Component)(nil)
	_ component.HealthChecker[owner]     = (*Component)(nil)
	_ component.ReadinessReporter[owner] = (*Component)(nil)
	_ component.ScaleInPreparer[owner]   = (*Component)(nil)
)

// Name is "dm-worker".
func (c *Component) Name() string { return names.DMWorkerComponent }

// Enabled reports whether spec.worker is set.
func (c *Component) Enabled(dc owner) bool { return dc.Spec.Worker != nil }

// Replicas is spec.worker.replicas.
func (c *Component) Replicas(dc owner) int32 { return dc.Spec.Worker.Replicas }

// Status is status.worker's component part.
func (c *Component) Status(dc owner) *v1alpha1.ComponentStatus {
	return &dc.Status.Worker.ComponentStatus
}

// Services returns <dc>-dm-worker-peer.
func (c *Component) Services(dc owner) []*corev1.Service { return newServices(dc) }

// ConfigData returns config-file and startup-script.
func (c *Component) ConfigData(dc owner) (map[string]string, error) { return newConfigData(dc) }

// StatefulSet returns <dc>-dm-worker mounting configMap.
func (c *Component) StatefulSet(dc owner, configMap string) (*appsv1.StatefulSet, error) {
	if configMap == "" {
		configMap = names.DMWorker(dc.Name)
	}
	return newStatefulSet(dc, configMap)
}

// Traits say NoPartition, because v1.6 lets the StatefulSet controller roll
// workers natively (spec dm.md §8).
func (c *Component) Traits() component.Traits { return component.Traits{NoPartition: true} }

// Gate waits until dm-master is available (spec dm.md §7): with q =
// master.replicas/2+1, at least q members, q of them healthy, q Ready pods,
// and dm-master not suspended.
func (c *Component) Gate(dc owner) string {
	if MasterAvailable(dc) {
		return ""
	}
	return WaitingForMaster
}

// MasterAvailable reports whether dm-master has a quorum of healthy members
// and Ready pods and is not suspended.
func MasterAvailable(dc owner) bool {
	st := &dc.Status.Master
	q := int(dc.Spec.Master.Replicas/2 + 1)
	healthy := 0
	for _, m := range st.Members {
		if m.Health {
			healthy++
		}
	}
	return len(st.Members) >= q && healthy >= q && st.StatefulSet != nil &&
		int(st.StatefulSet.ReadyReplicas) >= q && st.Phase != v1alpha1.SuspendPhase
}

// Observe fills status.worker from dm-master's worker list (spec dm.md §6):
// members keyed by name, each keeping its lastTransitionTime until its
// stage changes; an offline worker whose ordinal is no longer desired is
// deleted from dm-master (an error is logged). When dm-master cannot be
// asked, synced turns false and the error is returned for the skeleton to
// log.
func (c *Component) Observe(ctx context.Context, dc owner, sts *appsv1.StatefulSet) error {
	st := &dc.Status.Worker
	cl := dmmaster.Client(c.ctl, dc)
	if cl == nil {
		st.Synced = false
		return nil
	}
	workers, err := cl.GetWorkers(ctx)
	if err != nil {
		st.Synced = false
		return fmt.Errorf("list dm-workers: %w", err)
	}
	now := metav1.NewTime(c.clock.Now())
	members := map[string]v1alpha1.WorkerMember{}
	for _, w := range workers {
		if w.Name == "" {
			continue
		}
		m := v1alpha1.WorkerMember{Name: w.Name, Addr: w.Addr, Stage: w.Stage, LastTransitionTime: now}
		if old, ok := st.Members[w.Name]; ok && old.Stage == m.Stage && !old.LastTransitionTime.IsZero() {
			m.LastTransitionTime = old.LastTransitionTime
		}
		members[w.Name] = m
		if w.Stage == dmapi.StageOffline && !desired(dc, w.Name) {
			if err := cl.DeleteWorker(ctx, w.Name); err != nil {
				klog.FromContext(ctx).Info("could not delete an offline dm-worker", "worker", w.Name, "err", err)
			}
		}
	}
	st.Members, st.Synced = members, true
	return nil
}

// desired reports whether worker (a pod name) has an ordinal below the
// desired count (replicas plus failure members).
func desired(dc owner, worker string) bool {
	prefix := names.DMWorker(dc.Name) + "-"
	if !strings.HasPrefix(worker, prefix) {
		return true // not one of ours: leave it
	}
	o, err := strconv.Atoi(strings.TrimPrefix(worker, prefix))
	if err != nil {
		return true
	}
	return o < int(dc.Spec.Worker.Replicas)+len(dc.Status.Worker.FailureMembers)
}

// PodHealthy reports whether dm-master lists podName as a worker that is not offline.
func (c *Component) PodHealthy(dc owner, podName string) bool {
	m, ok := dc.Status.Worker.Members[podName]
	return ok && m.Stage != dmapi.StageOffline
}

// NotReady is DMMasterUnhealthy (v1.6 reuses dm-master's reason) while the
// workers are not the desired count or one is offline.
func (c *Component) NotReady(dc owner) (reason, message string) {
	st := &dc.Status.Worker
	ok := len(st.Members) == int(dc.Spec.Worker.Replicas)+len(st.FailureMembers)
	for _, m := range st.Members {
		ok = ok && m.Stage != dmapi.StageOffline
	}
	if !ok {
		return dmmaster.ReasonUnhealthy, "some dm-worker(s) are not up yet"
	}
	return "", ""
}

// PreScaleIn lets a worker pod go first once worker status is synced: its
// registration is removed later by Observe, when dm-master reports it
// offline and its ordinal is no longer desired (spec dm.md §7).
func (c *Component) PreScaleIn(_ context.Context, dc owner, _ int32) error {
	if !dc.Status.Worker.Synced {
		return flow.Requeue("dm-worker status is not synced; cannot scale in")
	}
	return nil
}
