// Package tikv is the TiKV member manager: pure builders for TiKV's
// headless Service, ConfigMap and StatefulSet, the observation of its
// stores through PD, and the availability gate TiDB waits on. The component
// skeleton does every write.
package tikv

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Component is TiKV as the skeleton sees it. The store lifecycle it
// shares with TiFlash (status from PD, scale-in through Tombstone,
// failover, health) is the embedded store.Lifecycle; TiKV adds leader
// eviction around restarts (hooks.go).
type Component struct {
	*store.Lifecycle
	writer   *apply.Applier
	pods     corelisters.PodLister
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// Kind is TiKV's store kind: stores without the engine=tiflash label.
var Kind = store.Kind{
	Component: names.TiKV,
	Status:    func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiKV },
	Spec: func(tc *v1alpha1.TidbCluster) store.Spec {
		kv := tc.Spec.TiKV
		s := store.Spec{Replicas: kv.Replicas, MaxFailoverCount: kv.MaxFailoverCount, RecoverFailover: kv.RecoverFailover}
		if kv.Failover != nil {
			s.RecoverByUID = string(kv.Failover.RecoverByUID)
		}
		return s
	},
	NotUpReason: "TiKVStoreNotUp",
	Label:       "TiKV",
}

// New returns the TiKV component over env.
func New(env *component.Env) *Component {
	return &Component{Lifecycle: store.New(Kind, env), writer: env.Writer, pods: env.Pods, recorder: env.Recorder, clock: env.Clock}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]         = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]          = (*Component)(nil)
	_ component.Gated[*v1alpha1.TidbCluster]             = (*Component)(nil)
	_ component.ReadinessReporter[*v1alpha1.TidbCluster] = (*Component)(nil)
	_ component.ScaleInPreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradePreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradeUndoer[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.UpgradeFinisher[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.HealthChecker[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.ScaleOutStepper[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.FailoverHandler[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.PodMaintainer[*v1alpha1.TidbCluster]     = (*Component)(nil)
)

// Name is "tikv".
func (c *Component) Name() string { return names.TiKV }

// Enabled reports whether spec.tikv is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiKV != nil }

// Replicas is spec.tikv.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.TiKV.Replicas }

// Status is status.tikv.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.TiKV.ComponentStatus
}

// Gate waits for PD to be available (pd.Available) and, in micro-service
// mode, for its tso service (pd.TSOAvailable); a cluster without its own
// PD (spec.cluster or spec.pdAddresses) does not wait, because the PD it
// joins is not this operator's to watch.
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if ok, reason := pd.Available(tc); !ok {
		return reason
	}
	return pd.TSOAvailable(tc)
}

// Services returns <tc>-tikv-peer.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns tikv.toml and the start script, or nil without spec.tikv.config.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-tikv.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}
