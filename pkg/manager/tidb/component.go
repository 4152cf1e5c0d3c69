// Package tidb is the TiDB member manager: pure builders for TiDB's
// Services, ConfigMap and StatefulSet, the observation of its servers'
// health through their status port, and its dependency gate on TiKV. The
// component skeleton does every write.
package tidb

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
	"github.com/kubetidb/tidb-operator/pkg/manager/pump"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// Component is TiDB as the skeleton sees it, with its lifecycle hooks.
// TiDB servers keep no data, so a pod may be removed or restarted without
// preparation, and failover simply adds a server for each one unhealthy
// past the grace period.
type Component struct {
	tidb     tidbapi.Client
	pods     corelisters.PodLister
	clock    clock.PassiveClock
	failover component.FailoverConfig
	recorder record.EventRecorder
	pd       pdapi.Control
	nodes    *store.Nodes
	writer   *apply.Applier
}

// New returns the TiDB component over env: it asks each server's health
// through a status-port client on env.HTTP, reads the pods' nodes from
// env.Pods and stamps health transitions with env.Clock.
func New(env *component.Env) *Component {
	var client tidbapi.Client
	if env.HTTP != nil {
		client = tidbapi.NewClient(env.HTTP, 0)
	}
	return NewWithClient(env, client)
}

// NewWithClient is New with the status-port client given (tests, benchmarks).
func NewWithClient(env *component.Env, client tidbapi.Client) *Component {
	return &Component{tidb: client, pods: env.Pods, clock: env.Clock, failover: env.Failover(names.TiDB), recorder: env.Recorder,
		pd: env.PD, nodes: store.NewNodes(env.NodeClient(), env.Recorder), writer: env.Writer}
}

var (
	_ component.Component[*v1alpha1.TidbCluster]         = (*Component)(nil)
	_ component.Observer[*v1alpha1.TidbCluster]          = (*Component)(nil)
	_ component.Gated[*v1alpha1.TidbCluster]             = (*Component)(nil)
	_ component.ReadinessReporter[*v1alpha1.TidbCluster] = (*Component)(nil)
	_ component.HealthChecker[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.ScaleOutStepper[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.FailoverHandler[*v1alpha1.TidbCluster]   = (*Component)(nil)
	_ component.PodMaintainer[*v1alpha1.TidbCluster]     = (*Component)(nil)
	_ component.RolloutGuard[*v1alpha1.TidbCluster]      = (*Component)(nil)
)

// Name is "tidb".
func (c *Component) Name() string { return names.TiDB }

// Enabled reports whether spec.tidb is set.
func (c *Component) Enabled(tc *v1alpha1.TidbCluster) bool { return tc.Spec.TiDB != nil }

// Replicas is spec.tidb.replicas.
func (c *Component) Replicas(tc *v1alpha1.TidbCluster) int32 { return tc.Spec.TiDB.Replicas }

// Status is status.tidb.
func (c *Component) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	return &tc.Status.TiDB.ComponentStatus
}

// Gate waits for TiKV to be available (tikv.Available) and, with spec.pump,
// for an online pump (pump.Available); a cluster without
// spec.tikv uses another cluster's TiKV and does not wait. A cluster being
// restored from volume snapshots (spec.recoveryMode) starts no TiDB, because
// SQL traffic would write into the data being restored.
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if tc.Spec.RecoveryMode {
		return "the cluster is in recovery mode"
	}
	if ok, reason := tikv.Available(tc); !ok {
		return reason
	}
	if ok, reason := pump.Available(tc); !ok {
		return reason
	}
	return ""
}

// Services returns <tc>-tidb-peer and, when spec.tidb.service is set, <tc>-tidb.
func (c *Component) Services(tc *v1alpha1.TidbCluster) []*corev1.Service { return newServices(tc) }

// ConfigData returns tidb.toml and the start script, or nil without spec.tidb.config.
func (c *Component) ConfigData(tc *v1alpha1.TidbCluster) (map[string]string, error) {
	return newConfigData(tc)
}

// StatefulSet returns <tc>-tidb.
func (c *Component) StatefulSet(tc *v1alpha1.TidbCluster, configMap string) (*appsv1.StatefulSet, error) {
	return newStatefulSet(tc, configMap)
}

// Observe fills status.tidb.members; see observeMembers. Then, unless the
// cluster is paused, the healthy servers get their node's zone as server
// labels (syncServerLabels). Before the StatefulSet exists there is no
// server to ask and members are cleared.
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	if sts == nil {
		tc.Status.TiDB.Members = nil
		return nil
	}
	if err := observeMembers(ctx, c.tidb, c.pods, c.clock, tc, sts); err != nil || tc.Spec.Paused {
		return err
	}
	c.syncServerLabels(ctx, tc)
	return nil
}
