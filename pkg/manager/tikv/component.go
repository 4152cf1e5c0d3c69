// Package tikv is the TiKV member manager: pure builders for TiKV's
// headless Service, ConfigMap and StatefulSet, the observation of its
// stores through PD, and the availability gate TiDB waits on. The component
// skeleton does every write.
package tikv

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Component is TiKV as the skeleton sees it.
type Component struct {
	pd    pdapi.Control
	clock clock.PassiveClock
}

// New returns the TiKV component, reading stores from PD through pd and
// stamping state transitions with clk.
func New(pd pdapi.Control, clk clock.PassiveClock) *Component {
	return &Component{pd: pd, clock: clk}
}

var _ component.Component = (*Component)(nil)

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

// Gate waits for PD to be available (pd.Available); a cluster without its
// own PD (spec.cluster or spec.pdAddresses) does not wait, because the PD
// it joins is not this operator's to watch.
func (c *Component) Gate(tc *v1alpha1.TidbCluster) string {
	if ok, reason := pd.Available(tc); !ok {
		return reason
	}
	return ""
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

// Observe fills status.tikv stores from PD; see observeStores. Before the
// StatefulSet exists no store can have registered, so PD is not asked.
func (c *Component) Observe(ctx context.Context, tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	if sts == nil {
		tc.Status.TiKV.Synced = false
		return nil
	}
	return observeStores(ctx, c.pd, c.clock, tc)
}
