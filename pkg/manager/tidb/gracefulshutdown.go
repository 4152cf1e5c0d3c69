package tidb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// How soon a graceful-shutdown request is looked at again while PD, TiKV
// or TiDB upgrade or scale (the TiDB Operator rechecks after 1 min), and
// while another TiDB pod is not Ready.
const (
	shutdownBusyInterval     = time.Minute
	shutdownNotReadyInterval = 15 * time.Second
)

// MaintainPods deletes a TiDB pod annotated
// tidb.pingcap.com/tidb-graceful-shutdown: delete-pod (spec §6.4), so it
// restarts through its own graceful shutdown (terminationGracePeriodSeconds,
// preStop). It waits while PD, TiKV or TiDB upgrade or scale, and deletes
// one pod at a time, only while every other TiDB pod is Ready, so the
// servers left keep serving. Waits are revisits (flow.RevisitAfter); an
// error of the API server is returned.
func (c *Component) MaintainPods(ctx context.Context, tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) error {
	ordinals := make([]int32, 0, len(pods))
	for o := range pods {
		ordinals = append(ordinals, o)
	}
	slices.Sort(ordinals)
	for _, o := range ordinals {
		pod := pods[o]
		value, ok := pod.Annotations[label.AnnTiDBGracefulShutdown]
		if !ok || pod.DeletionTimestamp != nil {
			continue
		}
		if value != label.EvictLeaderDeletePod {
			klog.FromContext(ctx).Info("ignoring a tidb-graceful-shutdown annotation with an unknown value", "pod", pod.Name, "value", value)
			continue
		}
		if busy := busyComponents(tc); len(busy) > 0 {
			flow.RevisitAfter(ctx, shutdownBusyInterval, "graceful shutdown of %s waits while %s", pod.Name, strings.Join(busy, ", "))
			return nil
		}
		if other := notReadyOther(pods, o); other != "" {
			flow.RevisitAfter(ctx, shutdownNotReadyInterval, "graceful shutdown of %s waits until %s is Ready", pod.Name, other)
			return nil
		}
		reason := fmt.Sprintf("%s=%s", label.AnnTiDBGracefulShutdown, value)
		return c.writer.DeletePod(ctx, tc, pod.Name, apply.UIDIs(pod.UID), reason)
	}
	return nil
}

// busyComponents names PD, TiKV and TiDB while they upgrade or scale.
func busyComponents(tc *v1alpha1.TidbCluster) []string {
	var out []string
	for _, c := range []struct {
		name    string
		enabled bool
		phase   v1alpha1.MemberPhase
	}{
		{"PD", tc.Spec.PD != nil, tc.Status.PD.Phase},
		{"TiKV", tc.Spec.TiKV != nil, tc.Status.TiKV.Phase},
		{"TiDB", tc.Spec.TiDB != nil, tc.Status.TiDB.Phase},
	} {
		if c.enabled && (c.phase == v1alpha1.UpgradePhase || c.phase == v1alpha1.ScalePhase) {
			out = append(out, fmt.Sprintf("%s is in phase %s", c.name, c.phase))
		}
	}
	return out
}

// notReadyOther names a TiDB pod other than ordinal self that is not Ready.
func notReadyOther(pods map[int32]*corev1.Pod, self int32) string {
	for o, p := range pods {
		if o != self && !component.PodReady(p) {
			return p.Name
		}
	}
	return ""
}
