package dmmaster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// ReasonUnhealthy is the Ready condition's reason while dm-master is not
// fully healthy (and, as in v1.6, while dm-worker is not: dmworker reuses it).
const ReasonUnhealthy = "DMMasterUnhealthy"

// Component is dm-master as the skeleton sees it.
type Component struct {
	ctl      dmapi.Control
	clock    clock.PassiveClock
	recorder record.EventRecorder
	writer   *apply.Applier
	pvcs     corelisters.PersistentVolumeClaimLister
	failover component.FailoverConfig
}

// New returns dm-master asking ctl (nil asks nothing), over env: Clock
// times member transitions (nil is the real clock), Recorder takes events
// (nil: none), Writer and PVCs serve failover, which follows
// env.Failover("dm-master") (--auto-failover, --dm-master-failover-period).
func New(ctl dmapi.Control, env *component.Env) *Component {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Component{ctl: ctl, clock: clk, recorder: env.Recorder, writer: env.Writer, pvcs: env.PVCs,
		failover: env.Failover(names.DMMasterComponent)}
}

func (c *Component) eventf(dc owner, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(dc, eventType, reason, format, args...)
	}
}

type owner = *v1alpha1.DMCluster

var (
	_ component.Component[owner]         = (*Component)(nil)
	_ component.Observer[owner]          = (*Component)(nil)
	_ component.HealthChecker[owner]     = (*Component)(nil)
	_ component.ReadinessReporter[owner] = (*Component)(nil)
	_ component.ScaleInPreparer[owner]   = (*Component)(nil)
	_ component.UpgradePreparer[owner]   = (*Component)(nil)
)

// Name is "dm-master".
func (c *Component) Name() string { return names.DMMasterComponent }

// Enabled is always true: every DMCluster has dm-master.
func (c *Component) Enabled(owner) bool { return true }

// Replicas is spec.master.replicas.
func (c *Component) Replicas(dc owner) int32 { return dc.Spec.Master.Replicas }

// Status is status.master's component part.
func (c *Component) Status(dc owner) *v1alpha1.ComponentStatus {
	return &dc.Status.Master.ComponentStatus
}

// Services returns <dc>-dm-master and <dc>-dm-master-peer.
func (c *Component) Services(dc owner) []*corev1.Service { return newServices(dc) }

// ConfigData returns config-file and startup-script.
func (c *Component) ConfigData(dc owner) (map[string]string, error) { return newConfigData(dc) }

// StatefulSet returns <dc>-dm-master mounting configMap.
func (c *Component) StatefulSet(dc owner, configMap string) (*appsv1.StatefulSet, error) {
	if configMap == "" {
		configMap = names.DMMaster(dc.Name)
	}
	return newStatefulSet(dc, configMap)
}

// Traits are none: dm-master's pods restart one by one under the partition.
func (c *Component) Traits() component.Traits { return component.Traits{} }

// Client returns the dm-master client of dc, nil without a control.
func Client(ctl dmapi.Control, dc owner) dmapi.Client {
	if ctl == nil {
		return nil
	}
	return ctl.GetClient(dc.Namespace, dc.Name, dmapi.Options{TLSEnabled: TLSEnabled(dc)})
}

// Observe fills status.master (spec dm.md §6): members keyed by name, each
// keeping its lastTransitionTime until its health flips, the leader, and
// the StatefulSet's pods dm-master does not list (unjoinedMembers). When
// dm-master cannot be asked, synced turns false and the error is returned
// for the skeleton to log.
func (c *Component) Observe(ctx context.Context, dc owner, sts *appsv1.StatefulSet) error {
	st := &dc.Status.Master
	cl := Client(c.ctl, dc)
	if sts == nil || cl == nil {
		st.Synced = false
		return nil
	}
	masters, err := cl.GetMasters(ctx)
	if err != nil {
		st.Synced = false
		return fmt.Errorf("list dm-master members: %w", err)
	}
	leader, err := cl.GetLeader(ctx)
	if err != nil {
		st.Synced = false
		return fmt.Errorf("get dm-master leader: %w", err)
	}
	now := metav1.NewTime(c.clock.Now())
	members := map[string]v1alpha1.MasterMember{}
	for _, m := range masters {
		if m.Name == "" {
			continue
		}
		mm := v1alpha1.MasterMember{Name: m.Name, ID: string(m.MemberID), Health: m.Alive, LastTransitionTime: now}
		if len(m.ClientURLs) > 0 {
			mm.ClientURL = m.ClientURLs[0]
		}
		if old, ok := st.Members[m.Name]; ok && old.Health == mm.Health && !old.LastTransitionTime.IsZero() {
			mm.LastTransitionTime = old.LastTransitionTime
		}
		members[m.Name] = mm
	}
	st.Members, st.Synced = members, true
	st.Leader = members[leader.Name]
	st.UnjoinedMembers = c.unjoined(dc, sts, members, now)
	return nil
}

// unjoined lists the StatefulSet's pods that are not members, with the UID
// of each one's data PVC when the cache has it.
func (c *Component) unjoined(dc owner, sts *appsv1.StatefulSet, members map[string]v1alpha1.MasterMember, now metav1.Time) map[string]v1alpha1.UnjoinedMember {
	if sts.Spec.Replicas == nil {
		return nil
	}
	var out map[string]v1alpha1.UnjoinedMember
	for o := range *sts.Spec.Replicas {
		pod := names.DMMasterPod(dc.Name, o)
		if _, ok := members[pod]; ok {
			continue
		}
		if out == nil {
			out = map[string]v1alpha1.UnjoinedMember{}
		}
		u := v1alpha1.UnjoinedMember{PodName: pod, CreatedAt: now}
		if c.pvcs != nil {
			name := names.PVC(names.DMMasterComponent, dc.Name, names.DMMasterComponent, o)
			if pvc, err := c.pvcs.PersistentVolumeClaims(dc.Namespace).Get(name); err == nil {
				u.PVCUIDSet = map[types.UID]v1alpha1.EmptyStruct{pvc.UID: {}}
			}
		}
		out[pod] = u
	}
	return out
}

// PodHealthy reports whether dm-master lists podName as an alive member.
func (c *Component) PodHealthy(dc owner, podName string) bool {
	return dc.Status.Master.Members[podName].Health
}

// NotReady is DMMasterUnhealthy while dm-master's members are not the
// desired count or one is unhealthy.
func (c *Component) NotReady(dc owner) (reason, message string) {
	st := &dc.Status.Master
	healthy := len(st.Members) == int(dc.Spec.Master.Replicas)+deletedFailures(dc)
	for _, m := range st.Members {
		healthy = healthy && m.Health
	}
	if !healthy {
		return ReasonUnhealthy, "dm-master(s) are not healthy"
	}
	return "", ""
}

func deletedFailures(dc owner) int {
	n := 0
	for _, f := range dc.Status.Master.FailureMembers {
		if f.MemberDeleted {
			n++
		}
	}
	return n
}

// PreScaleIn removes the member of the pod with ordinal before the pod
// goes (spec dm.md §7): with status not synced it waits; a leader is
// evicted first and the scale-in waits for another; then the member is
// deleted and dm-master must no longer list it.
func (c *Component) PreScaleIn(ctx context.Context, dc owner, ordinal int32) error {
	st := &dc.Status.Master
	if !st.Synced {
		return flow.Requeue("dm-master status is not synced; cannot scale in")
	}
	cl := Client(c.ctl, dc)
	if cl == nil {
		return flow.Requeue("no dm-master client")
	}
	pod := names.DMMasterPod(dc.Name, ordinal)
	if ordinal > 0 && st.Leader.Name == pod {
		if err := cl.EvictLeader(ctx, pod); err != nil {
			return fmt.Errorf("evict dm-master leader %s: %w", pod, err)
		}
		return flow.Requeue("%s is transferring dm-master leader", pod)
	}
	if _, member := st.Members[pod]; member {
		if err := cl.DeleteMaster(ctx, pod); err != nil {
			return fmt.Errorf("delete dm-master member %s: %w", pod, err)
		}
	}
	// Also when this sync's status no longer lists it (deleted by an earlier
	// sync whose StatefulSet update did not land), dm-master must not.
	masters, err := cl.GetMasters(ctx)
	if err != nil {
		return fmt.Errorf("list dm-master members after deleting %s: %w", pod, err)
	}
	for _, m := range masters {
		if m.Name == pod {
			return fmt.Errorf("dm-master member %s is still listed after its deletion", pod)
		}
	}
	delete(st.Members, pod)
	return nil
}

// PreUpgradePod evicts the leader from the pod with ordinal before it
// restarts when the StatefulSet has more than one pod, and waits until
// another member leads (spec dm.md §8). While dm-master cannot be asked
// (status not synced) it waits: the leader and health it would go by are
// stale, and only a forced upgrade (which skips this hook) rolls then.
func (c *Component) PreUpgradePod(ctx context.Context, dc owner, ordinal int32) error {
	st := &dc.Status.Master
	if !st.Synced {
		return flow.Requeue("dm-master must answer before a dm-master pod restarts")
	}
	pod := names.DMMasterPod(dc.Name, ordinal)
	if st.Leader.Name != pod || st.StatefulSet == nil || st.StatefulSet.Replicas <= 1 {
		return nil
	}
	cl := Client(c.ctl, dc)
	if cl == nil {
		return nil
	}
	if err := cl.EvictLeader(ctx, pod); err != nil {
		return fmt.Errorf("evict dm-master leader %s: %w", pod, err)
	}
	return flow.Requeue("evicting %s's leader", pod)
}

var _ component.ForceUpgrader[owner] = (*Component)(nil)

// ForceUpgrade reports the tidb.pingcap.com/force-upgrade annotation while
// dm-master's status is not synced (spec dm.md §8): a cluster that cannot
// answer is rolled all at once, as v1.6 does with partition 0.
func (c *Component) ForceUpgrade(dc owner) bool {
	return component.ForceUpgradeAsked(dc) && !dc.Status.Master.Synced
}
