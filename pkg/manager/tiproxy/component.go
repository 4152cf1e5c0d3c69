package tiproxy

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tiproxyapi"
)

// Component is TiProxy as the skeleton sees it, with its lifecycle hooks.
type Component struct {
	tiproxy tiproxyapi.Client
	pods    corelisters.PodLister
	clock   clock.PassiveClock
}

// New returns the TiProxy component over env: it asks each proxy's health
// through an API-port client on env.HTTP, reads the pods from env.Pods and
// stamps health transitions with env.Clock.
func New(env *component.Env) *Component {
	var client tiproxyapi.Client
	if env.HTTP != nil {
		client = tiproxyapi.NewClient(env.HTTP, 0)
	}
	return NewWithClient(env, client)
}

// NewWithClient is New with the API-port client given (tests, benchmarks);
// a nil client asks no proxy anything.
func NewWithClient(env *component.Env, client tiproxyapi.Client) *Component {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Component{tiproxy: client, pods: env.Pods, clock: clk}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]         = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]          = (*Component)(nil)
	_ component.Gated[*v1alpha1.TidbCluster]             = (*Component)(nil)
	_ component.ReadinessReporter[*v1alpha1.TidbCluster] = (*Component)(nil)
	_ component.UpgradeUndoer[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.HealthChecker[*v1alpha1.TidbCluster]     = (*Component)(nil)
)

// Name is "tiproxy".
func (c *Component) Name() string { return names.TiProxy }

// Enabled reports whether spec.tiproxy is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiProxy != nil }

// Replicas is spec.tiproxy.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.TiProxy.Replicas }

// Status is status.tiproxy.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.TiProxy.ComponentStatus
}

// Gate waits for PD to be available, because TiProxy finds the TiDB
// servers it proxies to through PD; a cluster without spec.pd uses another
// cluster's PD and does not wait. (The TiDB Operator creates TiProxy
// without waiting; a proxy started before PD only retries.)
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if ok, reason := pd.Available(tc); !ok {
		return reason
	}
	return ""
}

// Services returns <tc>-tiproxy and <tc>-tiproxy-peer.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns proxy.toml and the start script.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-tiproxy.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}

// Traits says: TiProxy's rollout waits while PD scales or upgrades, because a
// restarted proxy must find the TiDB servers through PD (the TiDB Operator
// holds it back only while TiProxy itself scales; TiDB's rollout does not
// hold it, since TiProxy moves its sessions off a restarting TiDB by
// itself); a proxy
// keeps no data and needs no decommissioning to scale in (its clients are
// drained by TiProxy itself when the pod stops, graceful-close-conn-timeout;
// the skeleton marks the PVCs of its storage volumes for deferred deletion,
// as the TiDB Operator does); and it watches its config file and applies a
// change without a restart, so its ConfigMap is updated in place whatever
// configUpdateStrategy says (as the TiDB Operator does).
func (c *Component) Traits() component.Traits {
	return component.Traits{UpgradeBlockers: []string{names.PD}, FreeScaleIn: true, ReloadsConfig: true}
}

// Observe fills status.tiproxy.members; see observeMembers. Before the
// StatefulSet exists there is no proxy to ask and members are cleared.
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	if sts == nil {
		tc.Status.TiProxy.Members = nil
		tc.Status.TiProxy.Synced = false
		return nil
	}
	if c.tiproxy == nil {
		return nil
	}
	return observeMembers(ctx, c.tiproxy, c.pods, c.clock, tc, sts)
}
