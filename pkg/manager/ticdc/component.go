// Package ticdc is the TiCDC member manager: pure builders for its headless Service, its optional
// ConfigMap and its StatefulSet, the captures observed through TiCDC's open API, and the graceful steps
// around a capture's restart or removal — drain its tables to the other captures, hand the owner role
// over first when it holds it, wait at most spec.ticdc.gracefulShutdownTimeout (recorded on the pod, so
// a restarted operator resumes the same wait), and hold the rollout until the restarted capture is back.
// TiCDC waits for PD and TiKV. The component skeleton does every write.
package ticdc

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
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// Component is TiCDC as the skeleton sees it, with its lifecycle hooks.
type Component struct {
	cdc      ticdcapi.Client
	pods     corelisters.PodLister
	writer   *apply.Applier
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// New returns the TiCDC component over env: it asks TiCDC through a client on env.HTTP, reads pods
// from env.Pods, annotates them through env.Writer, records events with env.Recorder and times the
// graceful shutdown with env.Clock.
func New(env *component.Env) *Component {
	var client ticdcapi.Client
	if env.HTTP != nil {
		client = ticdcapi.NewClient(env.HTTP, 0)
	}
	return NewWithClient(env, client)
}

// NewWithClient is New with the TiCDC client given (tests, benchmarks). A nil client observes nothing
// and prepares nothing (render).
func NewWithClient(env *component.Env, client ticdcapi.Client) *Component {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Component{cdc: client, pods: env.Pods, writer: env.Writer, recorder: env.Recorder, clock: clk}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]         = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]          = (*Component)(nil)
	_ component.Gated[*v1alpha1.TidbCluster]             = (*Component)(nil)
	_ component.ReadinessReporter[*v1alpha1.TidbCluster] = (*Component)(nil)
	_ component.ScaleInPreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradePreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradeUndoer[*v1alpha1.TidbCluster]     = (*Component)(nil)
)

// Name is "ticdc".
func (c *Component) Name() string { return names.TiCDC }

// Enabled reports whether spec.ticdc is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiCDC != nil }

// Replicas is spec.ticdc.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.TiCDC.Replicas }

// Status is status.ticdc.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.TiCDC.ComponentStatus
}

// Gate waits for PD (pd.Available) and then TiKV (tikv.Available): captures register in PD's etcd and
// pull changes from TiKV, so nothing of TiCDC is created, scaled or restarted before both are. A
// cluster without its own PD or TiKV does not wait for them.
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if ok, reason := pd.Available(tc); !ok {
		return reason
	}
	if ok, reason := tikv.Available(tc); !ok {
		return reason
	}
	return ""
}

// Services returns <tc>-ticdc-peer.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns config-file, or nil when spec.ticdc.config has only the items the start flags
// carry (tz, gc-ttl, log-level, log-file) or is absent.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-ticdc.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}

// Traits says: TiCDC's rollout waits while PD, TiKV, TiFlash, Pump or TiDB scale or upgrade (spec
// §6.3): TiCDC restarts last, once the cluster it replicates from is settled.
func (c *Component) Traits() component.Traits {
	return component.Traits{UpgradeBlockers: []string{names.PD, names.TiKV, names.TiFlash, names.Pump, names.TiDB}}
}
