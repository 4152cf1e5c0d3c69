// Package monitor holds the pure builders of a TidbMonitor's objects (spec
// §3.4): the Prometheus configuration generated from the monitored
// TidbClusters, the ConfigMaps <tm>-monitor and <tm>-monitor-grafana, the
// Services <tm>-prometheus, <tm>-grafana and <tm>-monitor-reloader, the
// StatefulSet <tm>-monitor (or one per shard, <tm>-monitor-shard-<i>) and
// the ServiceAccount, Role and RoleBinding Prometheus' pod discovery needs.
// Nothing here reads an API, a clock or map order: the same monitor and
// targets always build the same objects.
package monitor

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// ComponentLabelVal is the app.kubernetes.io/component of every monitor object.
const ComponentLabelVal = "monitor"

// ShardLabelKey labels a monitor pod (and its StatefulSet) with its shard.
const ShardLabelKey = "monitor.tidb.pingcap.com/shard"

// Member returns "<tm>-monitor": the StatefulSet of an unsharded monitor,
// its ConfigMap, ServiceAccount, Role and RoleBinding.
func Member(tm string) string { return tm + "-monitor" }

// StatefulSet returns the StatefulSet name of shard i of shards:
// "<tm>-monitor" when there is one shard, else "<tm>-monitor-shard-<i>".
func StatefulSet(tm string, i, shards int32) string {
	if shards <= 1 {
		return Member(tm)
	}
	return fmt.Sprintf("%s-shard-%d", Member(tm), i)
}

// PrometheusService returns "<tm>-prometheus".
func PrometheusService(tm string) string { return tm + "-prometheus" }

// GrafanaService returns "<tm>-grafana".
func GrafanaService(tm string) string { return tm + "-grafana" }

// ReloaderService returns "<tm>-monitor-reloader".
func ReloaderService(tm string) string { return Member(tm) + "-reloader" }

// GrafanaConfigMap returns "<tm>-monitor-grafana".
func GrafanaConfigMap(tm string) string { return Member(tm) + "-grafana" }

// Labels are the labels of every object of tm and the selector of its
// Services: name tidb-cluster, managed by tidb-operator (the operator's
// caches hold only such objects), instance tm, component monitor.
func Labels(tm *v1alpha1.TidbMonitor) map[string]string {
	return map[string]string{
		label.NameLabelKey:      label.TiDBCluster,
		label.ManagedByLabelKey: label.TiDBOperator,
		label.InstanceLabelKey:  tm.Name,
		label.ComponentLabelKey: ComponentLabelVal,
	}
}
