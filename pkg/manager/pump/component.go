// Package pump is TiDB Binlog's Pump as a component of the skeleton: the headless Service <tc>-pump,
// the ConfigMap key pump-config, and the StatefulSet <tc>-pump rolled with a plain RollingUpdate (no
// partition control, as the TiDB Operator does) once PD, TiKV and TiFlash are not upgrading. Its
// members are the binlog registry as the pumps serve it; a pump leaves through Pump's offline request,
// and its pod goes only once the registry says offline. TiDB's dependency gate reads Available.
package pump

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// Component is Pump as the skeleton sees it, with its lifecycle hooks.
type Component struct {
	pump     pumpapi.Client
	pods     corelisters.PodLister
	writer   *apply.Applier
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// New returns the Pump component over env: it asks the pumps through an API client on env.HTTP,
// reads pods from env.Pods, annotates them through env.Writer, records events with env.Recorder and
// reads the time from env.Clock.
func New(env *component.Env) *Component {
	var client pumpapi.Client
	if env.HTTP != nil {
		client = pumpapi.NewClient(env.HTTP, 0)
	}
	return NewWithClient(env, client)
}

// NewWithClient is New with the Pump API client given (tests, benchmarks). A nil client observes
// nothing and refuses to scale in (render).
func NewWithClient(env *component.Env, client pumpapi.Client) *Component {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Component{pump: client, pods: env.Pods, writer: env.Writer, recorder: env.Recorder, clock: clk}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]       = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]        = (*Component)(nil)
	_ component.Gated[*v1alpha1.TidbCluster]           = (*Component)(nil)
	_ component.ScaleInPreparer[*v1alpha1.TidbCluster] = (*Component)(nil)
)

// Name is "pump".
func (c *Component) Name() string { return names.Pump }

// Enabled reports whether spec.pump is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.Pump != nil }

// Replicas is spec.pump.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.Pump.Replicas }

// Status is status.pump.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.Pump.ComponentStatus
}

// Services returns the headless <tc>-pump.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns pump-config.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-pump.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}

// Gate waits for PD to be available, because a pump registers in PD's etcd and takes timestamps from
// PD as it starts, and exits when it cannot; a cluster without spec.pd uses another cluster's PD and
// does not wait. (The TiDB Operator creates Pump without waiting, and the pumps restart until PD
// answers.) TiKV is not waited for: Pump stores binlog on its own volume.
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if ok, reason := pd.Available(tc); !ok {
		return reason
	}
	return ""
}

// Traits says: Pump's rollout waits while PD, TiKV or TiFlash scale or upgrade, as the TiDB Operator
// withholds the StatefulSet update while they upgrade (spec §6.3: PD → TiKV/TiFlash → Pump → TiDB;
// the skeleton also waits while they scale); and its StatefulSet uses a plain RollingUpdate, the
// StatefulSet controller restarting the pumps one by one, each once the one before is Ready (spec §6.1).
func (c *Component) Traits() component.Traits {
	return component.Traits{UpgradeBlockers: []string{names.PD, names.TiKV, names.TiFlash}, NoPartition: true}
}

// Observe fills status.pump.members from the binlog registry; see observeMembers. Before the
// StatefulSet exists there is no pump to ask and members are cleared.
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	if sts == nil {
		tc.Status.Pump.Members = nil
		return nil
	}
	if c.pump == nil {
		return nil
	}
	return c.observeMembers(ctx, tc, sts)
}
