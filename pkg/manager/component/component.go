// Package component is the one sync skeleton every StatefulSet-backed
// component (PD, TiKV, TiDB …) runs: an ordered list of small named steps —
// observe status → pause guard → dependency gate → Services → ConfigMap →
// build StatefulSet → create (then wait) → scale → failover → upgrade →
// apply. Components supply only pure builders, a dependency gate, status
// observation and lifecycle hooks; the skeleton owns every write.
package component

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Component is what a member manager supplies to the skeleton. Builders are
// pure: they read only tc (already defaulted and validated) and their
// arguments, never a lister, client or clock.
type Component interface {
	// Name is the component's label value and name suffix, e.g. "pd".
	Name() string
	// Enabled reports whether tc has this component (spec.<component> set).
	Enabled(tc *v1alpha1.TidbCluster) bool
	// Replicas is the desired number of pods.
	Replicas(tc *v1alpha1.TidbCluster) int32
	// Status returns the component's status inside tc.Status, for the
	// skeleton to fill StatefulSet status, image and phase.
	Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus
	// Gate returns "" when the components this one depends on are available,
	// else why it must wait (e.g. "waiting for PD quorum: 1 of 3 healthy").
	Gate(tc *v1alpha1.TidbCluster) string
	// Services returns the component's Services.
	Services(tc *v1alpha1.TidbCluster) []*corev1.Service
	// ConfigData returns the ConfigMap data (config file and start script),
	// or nil when the component has no ConfigMap.
	ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error)
	// StatefulSet builds the desired StatefulSet mounting the ConfigMap
	// named configMap ("" when there is none). Replicas and partition are
	// set by the skeleton.
	StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error)
	// Observe fills the component-specific status (PD members, TiKV stores,
	// TiDB health) from the component's own API. A component that cannot be
	// reached records that in status and returns nil; an error is logged and
	// does not stop the sync.
	Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error
}

// Hooks are the lifecycle slots a component fills; the skeleton calls them
// around the planner's actions. A hook returns nil when the action may
// proceed, a flow.RequeueError to wait, or an error.
type Hooks interface {
	// PreScaleIn prepares removing the pod with ordinal (delete the PD
	// member, take the TiKV store to Tombstone) and returns nil once the pod
	// may be deleted.
	PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error
	// PreUpgradePod prepares restarting the pod with ordinal (transfer the PD
	// leader, evict TiKV leaders) and returns nil once it may restart.
	PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error
	// PostUpgradePod undoes the preparation once the restarted pod with
	// ordinal is available again (remove the evict-leader scheduler). It is
	// called for every available updated pod during a rollout, so it must be
	// cheap when there is nothing to undo.
	PostUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error
	// EndUpgrade removes whatever a rollout may have left behind (TiKV: every
	// evict-leader scheduler of the cluster's stores), also for pods that were
	// not available when the rollout ended. It is called on the first sync
	// after a rollout ended and again until it returns nil.
	EndUpgrade(ctx context.Context, tc *v1alpha1.TidbCluster) error
	// PodHealthy reports whether a pod is healthy in the component's own
	// terms (a healthy PD member, an Up store, a TiDB answering /status).
	PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool
	// UpgradeBlocker returns why pods may not restart now ("" when they
	// may): a component this one depends on is scaling or upgrading.
	UpgradeBlocker(tc *v1alpha1.TidbCluster) string
	// ForceUpgrade reports whether every pod should restart at once.
	ForceUpgrade(tc *v1alpha1.TidbCluster) bool
	// ScaleOutStep bounds how many pods one scale-out adds (0: all).
	ScaleOutStep(tc *v1alpha1.TidbCluster) int32
	// Failover updates the component's failure records in tc.Status (mark
	// members failed past the grace period, recover them) and returns an
	// error only when it could not decide.
	Failover(ctx context.Context, tc *v1alpha1.TidbCluster) error
	// FailoverReplicas is the number of extra pods the failure records ask for.
	FailoverReplicas(tc *v1alpha1.TidbCluster) int32
}

// NoHooks is the Hooks of a component without lifecycle support: it scales
// out and rolls pods but refuses to scale in, because removing a stateful
// member needs component-specific preparation.
type NoHooks struct{}

var _ Hooks = NoHooks{}

// PreScaleIn refuses.
func (NoHooks) PreScaleIn(context.Context, *v1alpha1.TidbCluster, int32) error {
	return flow.Requeue("scale-in is not supported for this component")
}

// PreUpgradePod needs nothing.
func (NoHooks) PreUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// PostUpgradePod needs nothing.
func (NoHooks) PostUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// EndUpgrade needs nothing.
func (NoHooks) EndUpgrade(context.Context, *v1alpha1.TidbCluster) error { return nil }

// PodHealthy trusts the pod's readiness.
func (NoHooks) PodHealthy(*v1alpha1.TidbCluster, string) bool { return true }

// UpgradeBlocker blocks nothing.
func (NoHooks) UpgradeBlocker(*v1alpha1.TidbCluster) string { return "" }

// ForceUpgrade is never needed.
func (NoHooks) ForceUpgrade(*v1alpha1.TidbCluster) bool { return false }

// ScaleOutStep adds one pod at a time.
func (NoHooks) ScaleOutStep(*v1alpha1.TidbCluster) int32 { return 1 }

// Failover does nothing.
func (NoHooks) Failover(context.Context, *v1alpha1.TidbCluster) error { return nil }

// FailoverReplicas is 0.
func (NoHooks) FailoverReplicas(*v1alpha1.TidbCluster) int32 { return 0 }
