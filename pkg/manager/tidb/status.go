package tidb

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// ClientOptions says how the operator reaches tc's TiDB status ports.
func ClientOptions(tc *v1alpha1.TidbCluster) tidbapi.Options {
	return tidbapi.Options{TLSEnabled: tlsEnabled(tc), ClusterDomain: tc.Spec.ClusterDomain}
}

// observeMembers fills status.tidb.members with one member per ordinal of
// the StatefulSet: its health (a pod that does not exist is unhealthy and
// not asked; the others are asked concurrently, tidbapi.DefaultParallelism
// at a time, so that down servers cost about one timeout), its node, and a
// lastTransitionTime that moves only when the health changes, because
// failover timers start there. When any check cannot be made (the
// operator's own failure, such as no TLS client certificate) the old
// members are kept and the error returned, because marking servers
// unhealthy for the operator's fault would start failover.
func observeMembers(ctx context.Context, client tidbapi.Client, pods corelisters.PodLister, clk clock.PassiveClock,
	tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	replicas := int32(0)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	nodes := map[string]string{}
	var existing []string
	for i := range replicas {
		name := names.Pod(tc.Name, names.TiDB, i)
		pod, err := pods.Pods(tc.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get pod %s: %w", name, err)
		}
		existing = append(existing, name)
		nodes[name] = pod.Spec.NodeName
	}
	health, err := tidbapi.GetHealthOfPods(ctx, client, tc.Namespace, tc.Name, existing, ClientOptions(tc), 0)
	if err != nil {
		return fmt.Errorf("TiDB health: %w", err)
	}
	now := metav1.NewTime(clk.Now())
	members := make(map[string]v1alpha1.TiDBMember, replicas)
	for i := range replicas {
		name := names.Pod(tc.Name, names.TiDB, i)
		m := v1alpha1.TiDBMember{Name: name, Health: health[name], NodeName: nodes[name], LastTransitionTime: now}
		if old, ok := tc.Status.TiDB.Members[name]; ok {
			if m.NodeName == "" {
				m.NodeName = old.NodeName // keep the last known node of a pod being recreated
			}
			if old.Health == m.Health && !old.LastTransitionTime.IsZero() {
				m.LastTransitionTime = old.LastTransitionTime
			}
		}
		members[name] = m
	}
	if len(members) == 0 {
		members = nil
	}
	tc.Status.TiDB.Members = members
	return nil
}

// HealthyMembers counts the healthy TiDB servers in status.
func HealthyMembers(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.TiDB.Members {
		if m.Health {
			n++
		}
	}
	return n
}

// Available reports whether at least one TiDB server is healthy and its
// pod Ready, and says why not when it is not; components that need SQL
// (the password initializer, TiCDC's consumers) may wait on it.
func Available(tc *v1alpha1.TidbCluster) (bool, string) {
	if tc.Spec.TiDB == nil {
		return false, "the cluster has no TiDB"
	}
	ready := int32(0)
	if sts := tc.Status.TiDB.StatefulSet; sts != nil {
		ready = sts.ReadyReplicas
	}
	if ready < 1 {
		return false, "waiting for TiDB pods: none Ready"
	}
	if HealthyMembers(tc) < 1 {
		return false, "waiting for TiDB servers: none healthy"
	}
	return true, ""
}
