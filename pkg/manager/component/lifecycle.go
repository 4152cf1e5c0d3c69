package component

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// scale moves the StatefulSet's replicas one step toward the desired count.
// Scale-out adds the next ordinals at once; scale-in removes the highest
// ordinal, one per sync, only after the component's PreScaleIn hook has
// released it (a component without hooks cannot scale in).
func (m *Manager) scale(ctx context.Context, st *syncState) error {
	current := *st.desired.Spec.Replicas
	want := m.comp.Replicas(st.tc)
	switch {
	case want > current:
		setReplicas(st.desired, want)
		st.scaled = true
	case want < current:
		if m.hooks == nil {
			return controller.Requeue("scaling %s in from %d to %d is not supported yet", m.comp.Name(), current, want)
		}
		if err := m.hooks.PreScaleIn(ctx, st.tc, current-1); err != nil {
			return err
		}
		setReplicas(st.desired, current-1)
		st.scaled = true
	}
	return nil
}

// failover is the slot where replacement members are added; failover is
// planned by the lifecycle planner and is not wired yet.
func (m *Manager) failover(context.Context, *syncState) error { return nil }

// upgrade rolls pods to a new template one at a time, from the highest
// ordinal down, by lowering the partition. Scaling wins over upgrading:
// a round that changed replicas rolls nothing, because the ordinals being
// added or removed must settle before pods restart. Every updated pod must
// be Ready (and healthy by the component's hook) before the next restarts.
func (m *Manager) upgrade(ctx context.Context, st *syncState) error {
	live := st.live
	if st.scaled || live == nil || !upgrading(live) || st.desired.Spec.UpdateStrategy.RollingUpdate == nil {
		return nil
	}
	if live.Status.UpdateRevision == "" {
		return controller.Requeue("StatefulSet %s has no update revision yet", live.Name)
	}
	pods, err := m.podsByOrdinal(st)
	if err != nil {
		return err
	}
	replicas := *st.desired.Spec.Replicas
	for ordinal := replicas - 1; ordinal >= 0; ordinal-- {
		pod, ok := pods[ordinal]
		if !ok {
			return controller.Requeue("pod %s does not exist yet", names.Pod(st.tc.Name, m.comp.Name(), ordinal))
		}
		rev := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
		if rev == "" {
			return controller.Requeue("pod %s has no revision label yet", pod.Name)
		}
		if rev == live.Status.UpdateRevision {
			if !podReady(pod) {
				return controller.Requeue("upgraded pod %s is not Ready yet", pod.Name)
			}
			if m.hooks != nil && !m.hooks.UpgradedPodHealthy(st.tc, pod.Name) {
				return controller.Requeue("upgraded pod %s is not healthy yet", pod.Name)
			}
			continue
		}
		if m.hooks != nil {
			if err := m.hooks.PreUpgradePod(ctx, st.tc, ordinal); err != nil {
				return err
			}
		}
		p := ordinal
		st.desired.Spec.UpdateStrategy.RollingUpdate.Partition = &p
		return nil
	}
	return nil
}

func (m *Manager) podsByOrdinal(st *syncState) (map[int32]*corev1.Pod, error) {
	sel := labels.SelectorFromSet(Labels(st.tc, m.comp.Name()))
	list, err := m.pods.Pods(st.tc.Namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	out := make(map[int32]*corev1.Pod, len(list))
	prefix := names.Member(st.tc.Name, m.comp.Name()) + "-"
	for _, p := range list {
		if len(p.Name) <= len(prefix) || p.Name[:len(prefix)] != prefix {
			continue
		}
		if ord, err := names.Ordinal(p.Name); err == nil {
			out[ord] = p
		}
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
