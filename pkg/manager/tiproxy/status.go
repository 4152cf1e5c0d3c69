package tiproxy

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
	"github.com/kubetidb/tidb-operator/pkg/tiproxyapi"
)

// ClientOptions says how the operator reaches tc's TiProxy API ports: over
// TLS exactly when the API serves it (spec.tlsCluster, setHTTPServerTLS).
func ClientOptions(tc *v1alpha1.TidbCluster) tiproxyapi.Options {
	return tiproxyapi.Options{TLSEnabled: tlsCluster(tc), ClusterDomain: tc.Spec.ClusterDomain}
}

// observeMembers fills status.tiproxy.members with one member per ordinal
// of the StatefulSet: its health (a pod that does not exist is unhealthy
// and not asked; the others are asked concurrently, so that down proxies
// cost about one timeout), the health answer as its info, and a
// lastTransitionTime that moves only when the health changes. synced is
// true once every proxy could be asked. When a check cannot be made for
// the operator's own failure (no TLS client certificate) the old members
// are kept, synced is false and the error returned: marking proxies
// unhealthy for the operator's fault would hold rollouts for nothing.
func observeMembers(ctx context.Context, client tiproxyapi.Client, pods corelisters.PodLister, clk clock.PassiveClock,
	tc *v1alpha1.TidbCluster, sts *appsv1.StatefulSet) error {
	replicas := int32(0)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	var existing []string
	for i := range replicas {
		name := names.Pod(tc.Name, names.TiProxy, i)
		if pods == nil {
			existing = append(existing, name)
			continue
		}
		_, err := pods.Pods(tc.Namespace).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get pod %s: %w", name, err)
		}
		existing = append(existing, name)
	}
	health, err := tiproxyapi.GetHealthOfPods(ctx, client, tc.Namespace, tc.Name, existing, ClientOptions(tc), 0)
	if err != nil {
		tc.Status.TiProxy.Synced = false
		return fmt.Errorf("TiProxy health: %w", err)
	}
	now := metav1.NewTime(clk.Now())
	members := make(map[string]v1alpha1.TiProxyMember, replicas)
	for i := range replicas {
		name := names.Pod(tc.Name, names.TiProxy, i)
		h := health[name]
		m := v1alpha1.TiProxyMember{Name: name, Health: h.Healthy, Info: h.Body, LastTransitionTime: now}
		if old, ok := tc.Status.TiProxy.Members[name]; ok && old.Health == m.Health && !old.LastTransitionTime.IsZero() {
			m.LastTransitionTime = old.LastTransitionTime
		}
		members[name] = m
	}
	if len(members) == 0 {
		members = nil
	}
	tc.Status.TiProxy.Members = members
	tc.Status.TiProxy.Synced = true
	return nil
}

// HealthyMembers counts the healthy proxies in status.
func HealthyMembers(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.TiProxy.Members {
		if m.Health {
			n++
		}
	}
	return n
}
