package reclaim

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// PolicyManager is the first step of a cluster sync: it gives the PV of
// every bound cluster PVC spec.pvReclaimPolicy (PVCs marked defer-deleting
// are the cleaner's). A converged cluster costs no API request: the PVs
// are read from the cache.
type PolicyManager struct {
	pvcs  corelisters.PersistentVolumeClaimLister
	pods  corelisters.PodLister
	pvs   *volumes
	clock clock.PassiveClock
}

// NewPolicy returns the reclaim-policy step of a cluster sync (run first)
// over env's caches and write layer.
func NewPolicy(env *component.Env) *PolicyManager {
	clk := env.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &PolicyManager{pvcs: env.PVCs, pods: env.Pods, pvs: newVolumes(env), clock: clk}
}

// NewCleaner returns the PVC cleaner of a cluster sync (run last).
func NewCleaner(env *component.Env) *Cleaner {
	return &Cleaner{pvcs: env.PVCs, pods: env.Pods, sts: env.StatefulSets, pvs: newVolumes(env)}
}

func newVolumes(env *component.Env) *volumes {
	return &volumes{kube: env.Kube, writer: env.Writer, lister: env.PVs}
}

// Name labels metrics and logs.
func (m *PolicyManager) Name() string { return "pv_reclaim_policy" }

// Sync patches the PVs whose policy or labels differ, except those of new
// PD, TiKV and TiFlash PVCs the meta labeller will patch once with their
// member's IDs (component.AwaitsMetaLabels). It does nothing for a
// paused cluster or without a PV cache, and returns an error (the sync is
// retried) when a patch fails.
func (m *PolicyManager) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if tc.Spec.Paused || m.pvs.lister == nil {
		return nil
	}
	pvcs, err := claims(m.pvcs, tc)
	if err != nil {
		return err
	}
	now := m.clock.Now()
	for _, pvc := range pvcs {
		if deferred(pvc) || component.AwaitsMetaLabels(pvc, func() *corev1.Pod { return m.podOf(pvc) }, now) {
			continue
		}
		if err := m.pvs.ensure(ctx, tc, pvc, component.DesiredPV(tc, pvc, nil, "")); err != nil {
			return err
		}
	}
	return nil
}

// podOf returns the cached pod whose volume pvc is: a StatefulSet's claim
// is named <template>-<pod>, and the pod carries the claim's component and
// instance labels. It returns nil when there is none (or no pod cache).
func (m *PolicyManager) podOf(pvc *corev1.PersistentVolumeClaim) *corev1.Pod {
	if m.pods == nil {
		return nil
	}
	sel := labels.SelectorFromSet(labels.Set{label.InstanceLabelKey: pvc.Labels[label.InstanceLabelKey],
		label.ComponentLabelKey: pvc.Labels[label.ComponentLabelKey]})
	pods, err := m.pods.Pods(pvc.Namespace).List(sel)
	if err != nil {
		return nil
	}
	for _, p := range pods {
		if strings.HasSuffix(pvc.Name, "-"+p.Name) {
			return p
		}
	}
	return nil
}
