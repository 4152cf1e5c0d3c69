// Package dm assembles a DMCluster's members for its controller: the
// OwnerSettings through which the component skeleton reads a DMCluster's
// cluster-level fields, and the dm-master then dm-worker skeleton managers
// in sync order.
package dm

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/dmmaster"
	"github.com/kubetidb/tidb-operator/pkg/manager/dmworker"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Member is one step of a DMCluster sync as the controller runs it. Sync
// may change dc.Status and nothing else of dc; a wait is a
// flow.RequeueError, anything else an error to retry with backoff.
type Member interface {
	// Name labels metrics and logs, e.g. "dm-master".
	Name() string
	// Sync reconciles the member's objects for the defaulted, valid dc.
	Sync(ctx context.Context, dc *v1alpha1.DMCluster) error
}

// Members returns the dm-master then the dm-worker skeleton managers over
// env's write layer and caches, asking dm-master through ctl and timing
// member transitions by env.Clock. dm-master comes first because dm-worker
// waits for it (and, suspending, dm-worker goes first: the skeleton
// suspends in reverse registration order). Both register in env.Peers.
func Members(env *component.Env, ctl dmapi.Control) []Member {
	master := component.NewOwnedManager[*v1alpha1.DMCluster](dmmaster.New(ctl, env), Settings{}, env)
	worker := component.NewOwnedManager[*v1alpha1.DMCluster](dmworker.New(ctl, env), Settings{}, env)
	return []Member{master, worker}
}

// Settings are the OwnerSettings of a DMCluster. The zero value is ready.
type Settings struct{}

var _ component.OwnerSettings[*v1alpha1.DMCluster] = Settings{}

// Paused reports spec.paused.
func (Settings) Paused(dc *v1alpha1.DMCluster) bool { return dc.Spec.Paused }

// SchedulerName is spec.schedulerName.
func (Settings) SchedulerName(dc *v1alpha1.DMCluster) string { return dc.Spec.SchedulerName }

// PVCReplace is false: a DMCluster has no enablePVCReplace.
func (Settings) PVCReplace(*v1alpha1.DMCluster) bool { return false }

// Suspended reports the component's suspendAction.suspendStatefulSet, else the cluster's.
func (Settings) Suspended(dc *v1alpha1.DMCluster, c string) bool {
	a := defaulting.NewDMAccessor(dc, defaulting.Component(c)).SuspendAction()
	return a != nil && a.SuspendStatefulSet
}

// ConfigUpdateStrategy is spec.configUpdateStrategy through the accessor (InPlace when unset).
func (Settings) ConfigUpdateStrategy(dc *v1alpha1.DMCluster, c string) v1alpha1.ConfigUpdateStrategy {
	return defaulting.NewDMAccessor(dc, defaulting.Component(c)).ConfigUpdateStrategy()
}

// SetsAttributesClass reports whether the component's volumeAttributesClassName is set.
func (Settings) SetsAttributesClass(dc *v1alpha1.DMCluster, c string) bool {
	switch c {
	case names.DMMasterComponent:
		return dc.Spec.Master.VolumeAttributesClassName != nil
	case names.DMWorkerComponent:
		return dc.Spec.Worker != nil && dc.Spec.Worker.VolumeAttributesClassName != nil
	}
	return false
}

// ValidateLive returns nothing: a DMCluster has no update rules against its live objects.
func (Settings) ValidateLive(*v1alpha1.DMCluster, validation.Live) field.ErrorList { return nil }

// Labels are dmmaster.Labels.
func (Settings) Labels(dc *v1alpha1.DMCluster, c string) map[string]string {
	return dmmaster.Labels(dc, c)
}

// MinReadySeconds is 0: DM has no min-ready-seconds annotation.
func (Settings) MinReadySeconds(*v1alpha1.DMCluster, string) time.Duration { return 0 }

// ForceIfOldDown reports the tidb.pingcap.com/force-upgrade annotation.
func (Settings) ForceIfOldDown(dc *v1alpha1.DMCluster) bool {
	return dc.Annotations[label.AnnForceUpgradeKey] == "true"
}
