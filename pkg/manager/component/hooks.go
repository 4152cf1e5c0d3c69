package component

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// The optional hooks a Component[O] may implement, each generic over the
// owner kind O as the Component is (a TidbCluster component implements
// Observer[*v1alpha1.TidbCluster]). The skeleton type-asserts each; a
// component without one gets the behaviour its doc names. A hook
// returns nil when the action may proceed, a flow.RequeueError to wait, or
// an error.

// Observer fills the component-specific status (PD members, stores, TiDB
// health) from the component's own API. A component that cannot be reached
// records that in status and returns nil; an error is logged and does not
// stop the sync. Without it only the StatefulSet's status is recorded.
type Observer[O Owner] interface {
	Observe(ctx context.Context, tc O, sts *appsv1.StatefulSet) error
}

// Gated components wait for the ones they depend on: Gate returns "" when
// they are available, else why this one must wait ("waiting for PD quorum:
// 1 of 3 healthy"). Without it the component never waits.
type Gated[O Owner] interface {
	Gate(tc O) string
}

// ReadinessReporter says why the component keeps the cluster from Ready:
// a reason of the TiDB Operator's Ready condition (PDUnhealthy,
// TiKVStoreNotUp …) and a message, or "" when its members are healthy.
// Without it the component is ready once its StatefulSet is.
type ReadinessReporter[O Owner] interface {
	NotReady(tc O) (reason, message string)
}

// ScaleInPreparer prepares removing the pod with ordinal (delete the PD
// member, take the store to Tombstone) and returns nil once it may go.
// Without it the component refuses to scale in, as removing a member needs
// the component's own preparation, unless its Traits say FreeScaleIn.
type ScaleInPreparer[O Owner] interface {
	PreScaleIn(ctx context.Context, tc O, ordinal int32) error
}

// UpgradePreparer prepares restarting the pod with ordinal (transfer the
// PD leader, evict TiKV leaders) and returns nil once it may restart.
type UpgradePreparer[O Owner] interface {
	PreUpgradePod(ctx context.Context, tc O, ordinal int32) error
}

// UpgradeUndoer undoes the preparation once the restarted pod with ordinal
// is available again (remove the evict-leader scheduler). It is called for
// every available updated pod during a rollout, so it must be cheap when
// there is nothing to undo.
type UpgradeUndoer[O Owner] interface {
	PostUpgradePod(ctx context.Context, tc O, ordinal int32) error
}

// UpgradeFinisher removes whatever a rollout may have left behind (TiKV:
// every evict-leader scheduler of the cluster's stores), also for pods that
// were not available when the rollout ended. It is called on the first sync
// after a rollout ended and again until it returns nil.
type UpgradeFinisher[O Owner] interface {
	EndUpgrade(ctx context.Context, tc O) error
}

// PodMaintainer acts on the maintenance annotations users put on the
// component's pods (spec §6.4: TiKV evict-leader, PD transfer-leader, TiDB
// graceful shutdown; maintenance.go). The skeleton calls it on every sync
// once the StatefulSet exists, before failover and the planner's step,
// with this sync's pods by ordinal. It asks for a later look with
// flow.RevisitAfter instead of waiting, so an annotation never holds the
// rest of the sync back; an error is retried with backoff.
type PodMaintainer[O Owner] interface {
	MaintainPods(ctx context.Context, tc O, pods map[int32]*corev1.Pod) error
}

// HealthChecker reports whether a pod is healthy in the component's own
// terms (a healthy PD member, an Up store, a TiDB answering /status).
// Without it a Ready pod is healthy.
type HealthChecker[O Owner] interface {
	PodHealthy(tc O, podName string) bool
}

// ForceUpgrader reports whether every pod should restart at once.
type ForceUpgrader[O Owner] interface {
	ForceUpgrade(tc O) bool
}

// ScaleInStepper bounds how many pods one scale-in removes at once (its
// scalePolicy.scaleInParallelism); without it, one.
type ScaleInStepper[O Owner] interface {
	ScaleInStep(tc O) int32
}

// ScaleOutStepper bounds how many pods one scale-out adds (0: all).
// Without it one pod is added at a time.
type ScaleOutStepper[O Owner] interface {
	ScaleOutStep(tc O) int32
}

// FailoverHandler updates the component's failure records in tc.Status
// (mark members failed past the grace period, recover them) and says how
// many extra pods the records ask for. Failover errors only when it could
// not decide.
type FailoverHandler[O Owner] interface {
	Failover(ctx context.Context, tc O) error
	FailoverReplicas(tc O) int32
}

// CreatePreparer prepares what must exist before the StatefulSet is first
// created (TiFlash: placement rules enabled in PD) and returns nil once it
// may be.
type CreatePreparer[O Owner] interface {
	PreCreate(ctx context.Context, tc O) error
}

// CreateFinisher completes, once the StatefulSet exists, what PreCreate
// could not do before the component's pods ran (TiFlash: placement rules,
// which PD refuses to turn on until the first TiKV store registered). The
// skeleton calls it on every sync after the create step, so it must be
// cheap (no API call) once nothing is left to do. It asks for a later look
// with flow.RevisitAfter rather than waiting, so it never holds back the
// components synced after it; an error ends the component's sync.
type CreateFinisher[O Owner] interface {
	FinishCreate(ctx context.Context, tc O) error
}

// partitioned reports whether the skeleton moves comp's partition.
func partitioned[O Owner](comp Component[O]) bool { return !comp.Traits().NoPartition }

// configStrategy is the component's effective configUpdateStrategy.
func configStrategy[O Owner](settings OwnerSettings[O], tc O, comp Component[O]) v1alpha1.ConfigUpdateStrategy {
	if comp.Traits().ReloadsConfig {
		return v1alpha1.ConfigUpdateStrategyInPlace
	}
	return settings.ConfigUpdateStrategy(tc, comp.Name())
}

// RolloutGuard components hold a cluster-wide switch for the length of a
// rollout (TiDB's smooth upgrade pauses user DDL while its servers run
// mixed versions; tidb/smoothupgrade.go). Whatever it begins it records on
// the TidbCluster, so that an operator restart still ends it.
type RolloutGuard[O Owner] interface {
	// BeginRollout is called before every restart the planner plans (not a
	// forced one, which skips every preparation), before PreUpgradePod,
	// with the pod about to restart and the StatefulSet this sync applies.
	// It returns nil once the pod may restart, a flow.RequeueError to wait.
	BeginRollout(ctx context.Context, tc O, pod *corev1.Pod, desired *appsv1.StatefulSet) error
	// EndRollout is called on every sync in which every pod runs the
	// update revision and is available, so it must be cheap (no API call)
	// when no rollout was begun. An error ends the component's sync.
	EndRollout(ctx context.Context, tc O) error
}
