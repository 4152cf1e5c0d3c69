package tidbmonitor

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/monitor"
)

// deleteStaleShards deletes the StatefulSets tm controls that desired no
// longer names: the shards beyond a lowered spec.shards, or <tm>-monitor
// after sharding began (and the shards after it ended). Their data PVCs stay.
// It runs after the desired StatefulSets are applied, because the new shards
// must scrape before the old ones stop.
func (c *Control) deleteStaleShards(ctx context.Context, tm *v1alpha1.TidbMonitor, desired []*appsv1.StatefulSet) error {
	keep := map[string]bool{}
	for _, s := range desired {
		keep[s.Name] = true
	}
	live, err := c.sets.StatefulSets(tm.Namespace).List(labels.SelectorFromSet(monitor.Labels(tm)))
	if err != nil {
		return err
	}
	for _, s := range live {
		ref := metav1.GetControllerOf(s)
		if keep[s.Name] || ref == nil || ref.UID != tm.UID || s.DeletionTimestamp != nil {
			continue
		}
		err := c.applier.DeleteStatefulSet(ctx, tm, s.Name, "no longer a shard of the monitor (spec.shards)")
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
