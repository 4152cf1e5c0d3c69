// Package pd is the PD member manager: pure builders for PD's Services,
// ConfigMap and StatefulSet, the observation of PD's members, and (in the
// lifecycle work) its hooks. The component skeleton does every write.
package pd

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Component is PD as the skeleton sees it, with its lifecycle hooks: never
// restart or remove the PD leader without first handing leadership to
// another healthy member, and delete a member from PD before its pod goes.
type Component struct {
	pd       pdapi.Control
	clock    clock.PassiveClock
	failover component.FailoverConfig
	writer   *apply.Applier
	recorder record.EventRecorder
	meta     *Meta
	hosts    *component.NodeFailure
	reach    reachMemory // why PD could not be read, per cluster (reach.go)
}

// New returns the PD component over env: it reaches PD through env.PD,
// stamps transitions with env.Clock and deletes through env.Writer.
func New(env *component.Env) *Component {
	return &Component{pd: env.PD, clock: env.Clock, failover: env.Failover(names.PD), writer: env.Writer, recorder: env.Recorder,
		meta: NewMeta(env), hosts: component.NewNodeFailure(env)}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]         = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]          = (*Component)(nil)
	_ component.ScaleInPreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradePreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradeUndoer[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.HealthChecker[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.ForceUpgrader[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.ReadinessReporter[*v1alpha1.TidbCluster] = (*Component)(nil)
	_ component.FailoverHandler[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.PodMaintainer[*v1alpha1.TidbCluster]     = (*Component)(nil)
)

// Name is "pd".
func (c *Component) Name() string { return names.PD }

// Enabled reports whether spec.pd is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.PD != nil }

// Replicas is spec.pd.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.PD.Replicas }

// Status is status.pd.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.PD.ComponentStatus
}

// Services returns <tc>-pd and <tc>-pd-peer.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns pd.toml and the start script.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-pd.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}

// Traits are the zero value: PD waits for no other component, and its
// members are removed from PD before they go (PreScaleIn).
func (c *Component) Traits() component.Traits { return component.Traits{} }

// Observe fills status.pd from PD's API; see observeMembers. Then, unless
// the cluster is paused, PD's pods, PVCs and PVs get the meta labels
// (Meta). Before the StatefulSet exists there is no PD to ask. Why PD
// could not be read is named in the conditions, also by the syncs that
// do not ask it, until it answers (reach.go).
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	if sts == nil {
		tc.Status.PD.Synced = false
		c.recallUnreachable(ctx, tc)
		return nil
	}
	if !c.anyPodReady(tc) {
		// PD's client Service routes to Ready pods only: nothing could answer.
		tc.Status.PD.Synced = false
		c.recallUnreachable(ctx, tc)
		return fmt.Errorf("PD: no PD pod is Ready, so the Service %s has no endpoint to ask", names.Member(tc.Name, names.PD))
	}
	if err := observeMembers(ctx, c.pd, c.clock, tc); err != nil {
		c.unreachable(ctx, tc, err)
		return err
	}
	c.reach.forget(tc.UID)
	if tc.Spec.Paused {
		return nil
	}
	return c.meta.SyncMembers(ctx, tc, memberIDs(tc))
}

// memberIDs maps each PD pod of tc to its member ID (members named after
// a pod or its FQDN; other names are skipped).
func memberIDs(tc *v1alpha1.TidbCluster) map[string]string {
	ids := make(map[string]string, len(tc.Status.PD.Members))
	for name, m := range tc.Status.PD.Members {
		if pod, _, ok := podOfMember(tc, name); ok {
			ids[pod] = m.ID
		}
	}
	return ids
}
