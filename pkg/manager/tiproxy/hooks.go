package tiproxy

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// ReasonUnhealthy is the Ready condition's reason while fewer proxies are
// healthy than spec.tiproxy.replicas (the TiDB Operator's).
const ReasonUnhealthy = "TiProxyUnhealthy"

// PodHealthy reports whether the proxy answered its health check when the
// sync observed it.
func (c *Component) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return tc.Status.TiProxy.Members[podName].Health
}

// NotReady reports TiProxyUnhealthy while fewer proxies are healthy than
// desired.
func (c *Component) NotReady(tc *v1alpha1.TidbCluster) (reason, message string) {
	healthy := HealthyMembers(tc)
	if healthy < int(tc.Spec.TiProxy.Replicas) {
		return ReasonUnhealthy, fmt.Sprintf("TiProxy(s) are not healthy: %d of %d", healthy, tc.Spec.TiProxy.Replicas)
	}
	return "", ""
}

// PostUpgradePod holds the rollout until the restarted proxy with ordinal
// has been Ready for the cluster's min-ready-seconds (annotation
// tiproxy.pingcap.com/tiproxy-min-ready-seconds, 0 by default) and answers
// its health check now, so that the next proxy stops only once this one
// takes clients again — the TiDB Operator's TiProxy rollout step. It waits
// (flow.RequeueError) otherwise; there is nothing to undo, so it is cheap
// for a proxy that is long available.
func (c *Component) PostUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	pod := names.Pod(tc.Name, names.TiProxy, ordinal)
	if minReady := minReadySeconds(ctx, tc); minReady > 0 && c.pods != nil {
		p, err := c.pods.Pods(tc.Namespace).Get(pod)
		if err != nil {
			return flow.Requeue("waiting for restarted TiProxy %s: %v", pod, err)
		}
		if left := minReady - readyFor(p, c.clock.Now()); left > 0 {
			return flow.RequeueAfter(left, "waiting for restarted TiProxy %s to be Ready for %s (min-ready-seconds)", pod, minReady)
		}
	}
	if c.tiproxy == nil {
		return nil
	}
	h, err := c.tiproxy.GetHealth(ctx, tc.Namespace, tc.Name, pod, ClientOptions(tc))
	switch {
	case err != nil:
		return flow.Requeue("waiting for restarted TiProxy %s to answer its health check: %v", pod, err)
	case !h.Healthy:
		return flow.Requeue("waiting for restarted TiProxy %s to be healthy: %s", pod, h.Reason)
	}
	return nil
}

// minReadySeconds reads the TiDB Operator's annotation; a value that is
// not a non-negative integer is ignored with a warning, as the TiDB
// Operator does.
func minReadySeconds(ctx context.Context, tc *v1alpha1.TidbCluster) time.Duration {
	v, ok := tc.Annotations[label.AnnTiProxyMinReadySeconds]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		klog.FromContext(ctx).Info("ignoring an annotation that is not a number of seconds",
			"annotation", label.AnnTiProxyMinReadySeconds, "value", v)
		return 0
	}
	return time.Duration(n) * time.Second
}

// readyFor is how long p has been Ready (0 when it is not).
func readyFor(p *corev1.Pod, now time.Time) time.Duration {
	if !component.PodReady(p) {
		return 0
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return now.Sub(cond.LastTransitionTime.Time)
		}
	}
	return 0
}
