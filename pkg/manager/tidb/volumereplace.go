package tidb

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

var _ component.VolumeReplacer[*v1alpha1.TidbCluster] = (*Component)(nil)

// SpareVolumeReplicas is 0: TiDB keeps no data a spare would hold, and the
// skeleton replaces a TiDB pod only while every other one is Ready.
func (c *Component) SpareVolumeReplicas(*v1alpha1.TidbCluster) int32 { return 0 }

// PrepareVolumeReplace lets a TiDB pod's volumes (slow log, storageVolumes)
// be replaced at once, except while PD, TiKV or TiDB upgrade or scale, as
// the TiDB Operator waits (looked at again in a minute).
func (c *Component) PrepareVolumeReplace(_ context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod) error {
	if busy := busyComponents(tc); len(busy) > 0 {
		return flow.RequeueAfter(shutdownBusyInterval, "replacing the volumes of %s waits while %s", pod.Name, strings.Join(busy, ", "))
	}
	return nil
}
