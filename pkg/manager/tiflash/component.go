// Package tiflash is the TiFlash member manager: pure builders for its
// headless Service, ConfigMap (config and proxy templates) and StatefulSet,
// and its lifecycle on the store code it shares with TiKV (package store):
// status from PD's stores labelled engine=tiflash, scale-in through
// Tombstone (refused while a table has more TiFlash replicas than would
// remain), failover. PD's placement rules are turned on before its
// StatefulSet is created, or — when PD refuses until a TiKV store
// registered — right after, and each upgraded pod must report its store
// Running.
package tiflash

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tiflashapi"
)

// Component is TiFlash as the skeleton sees it.
type Component struct {
	*store.Lifecycle
	tiflash tiflashapi.Client
}

// Kind is TiFlash's store kind: stores labelled engine=tiflash.
var Kind = store.Kind{
	Component: names.TiFlash,
	TiFlash:   true,
	Status:    func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiFlash },
	Spec: func(tc *v1alpha1.TidbCluster) store.Spec {
		tf := tc.Spec.TiFlash
		s := store.Spec{Replicas: tf.Replicas, MaxFailoverCount: tf.MaxFailoverCount, RecoverFailover: tf.RecoverFailover}
		if tf.Failover != nil {
			s.RecoverByUID = string(tf.Failover.RecoverByUID)
		}
		return s
	},
	NotUpReason: "TiFlashStoreNotUp",
	Label:       "TiFlash",
}

// New returns the TiFlash component over env; the store-status client is
// built on env.HTTP.
func New(env *component.Env) *Component {
	var client tiflashapi.Client
	if env.HTTP != nil {
		client = tiflashapi.NewClient(env.HTTP, 0)
	}
	return NewWithClient(env, client)
}

// NewWithClient is New with the store-status client given (tests).
func NewWithClient(env *component.Env, client tiflashapi.Client) *Component {
	return &Component{Lifecycle: store.New(Kind, env), tiflash: client}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]         = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]          = (*Component)(nil)
	_ component.Gated[*v1alpha1.TidbCluster]             = (*Component)(nil)
	_ component.CreatePreparer[*v1alpha1.TidbCluster]    = (*Component)(nil)
	_ component.CreateFinisher[*v1alpha1.TidbCluster]    = (*Component)(nil)
	_ component.ReadinessReporter[*v1alpha1.TidbCluster] = (*Component)(nil)
	_ component.ScaleInPreparer[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.UpgradeUndoer[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.HealthChecker[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.ScaleOutStepper[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.FailoverHandler[*v1alpha1.TidbCluster]   = (*Component)(nil)
)

// Name is "tiflash".
func (c *Component) Name() string { return names.TiFlash }

// Enabled reports whether spec.tiflash is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiFlash != nil }

// Replicas is spec.tiflash.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.TiFlash.Replicas }

// Status is status.tiflash.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.TiFlash.ComponentStatus
}

// Gate waits for PD to be available, as TiFlash stores register with it.
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if ok, reason := pd.Available(tc); !ok {
		return reason
	}
	return ""
}

// Services returns <tc>-tiflash-peer.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns config_templ.toml and proxy_templ.toml.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-tiflash.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}

// Traits says: TiFlash's rollout waits while PD scales or upgrades (spec §6.3).
func (c *Component) Traits() component.Traits {
	return component.Traits{UpgradeBlockers: []string{names.PD}}
}

// ScaleOutStep is spec.tiflash.scalePolicy.scaleOutParallelism.
func (c *Component) ScaleOutStep(tc *v1alpha1.TidbCluster) int32 {
	if p := tc.Spec.TiFlash.ScalePolicy.ScaleOutParallelism; p != nil {
		return *p
	}
	return 1
}
