package component

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// diagnoseGrace is how long a pod may be missing, Pending or not Ready
// before the skeleton looks for why: a normal start takes less, and the
// look may cost API reads (Events, Secrets) that a healthy sync never makes.
const diagnoseGrace = 30 * time.Second

// diagnose records (flow.AddBlocker) the first concrete reason the
// component's pods do not run, so that a wait elsewhere ("waiting for a PD
// quorum: 0 of 1 members healthy") shows its cause: a Secret the pods mount
// that does not exist, a pod the StatefulSet cannot create (its
// FailedCreate event, e.g. a missing PriorityClass), a pod no scheduler
// places (its PodScheduled message, or no scheduler of that name), or a
// container that cannot start. It reads the caches, and the API only for
// pods stuck past diagnoseGrace; it never fails the sync.
func (m *Manager[O]) diagnose(ctx context.Context, st *syncState[O]) error {
	if st.live == nil || st.live.Spec.Replicas == nil {
		return nil
	}
	m.markDeletingVolumes(st)
	pods, err := m.podsByOrdinal(st)
	if err != nil {
		return nil
	}
	now := m.clock.Now()
	stuck := func(since metav1.Time) bool { return now.Sub(since.Time) >= diagnoseGrace }
	for o := int32(0); o < *st.live.Spec.Replicas; o++ {
		p, ok := pods[o]
		switch {
		case !ok && stuck(st.live.CreationTimestamp):
			flow.AddBlocker(ctx, m.whyNotCreated(ctx, st, o))
			return nil
		case ok && !PodReady(p) && p.DeletionTimestamp == nil && stuck(p.CreationTimestamp):
			if why := m.missingSecret(ctx, st.live); why != "" {
				flow.AddBlocker(ctx, why)
				return nil
			}
			flow.AddBlocker(ctx, whyNotRunning(m.owner.SchedulerName(st.tc), p))
			return nil
		}
	}
	return nil
}

// markDeletingVolumes sets the component's DataVolumeDeleting condition
// while a PVC of a wanted member (an ordinal below replicas) is being
// deleted, naming the PVCs, and removes it otherwise. It reads the cache.
func (m *Manager[O]) markDeletingVolumes(st *syncState[O]) {
	var deleting []string
	for o := int32(0); o < *st.live.Spec.Replicas; o++ {
		for _, name := range m.claimNames(st.tc, st.live.Spec.VolumeClaimTemplates, o) {
			if pvc, err := m.pvcs.PersistentVolumeClaims(st.tc.GetNamespace()).Get(name); err == nil && pvc.DeletionTimestamp != nil {
				deleting = append(deleting, name)
			}
		}
	}
	status := m.comp.Status(st.tc)
	if len(deleting) == 0 {
		meta.RemoveStatusCondition(&status.Conditions, v1alpha1.ComponentDataVolumeDeleting)
		return
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: v1alpha1.ComponentDataVolumeDeleting,
		Status: metav1.ConditionTrue, Reason: "PVCTerminating", ObservedGeneration: st.tc.GetGeneration(),
		Message: "PVC(s) of wanted members are being deleted; their data goes when the pods stop: " + strings.Join(deleting, ", ")})
}

// whyNotCreated reads the StatefulSet's FailedCreate events.
func (m *Manager[O]) whyNotCreated(ctx context.Context, st *syncState[O], ordinal int32) string {
	pod := names.Pod(st.tc.GetName(), m.comp.Name(), ordinal)
	sel := fields.Set{"involvedObject.kind": "StatefulSet", "involvedObject.name": st.live.Name, "reason": "FailedCreate"}
	events, err := m.kube.CoreV1().Events(st.tc.GetNamespace()).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err == nil {
		var last *corev1.Event
		for i := range events.Items {
			if e := &events.Items[i]; last == nil || eventTime(e).After(eventTime(last)) {
				last = e
			}
		}
		if last != nil {
			return fmt.Sprintf("StatefulSet %s cannot create pod %s: %s", st.live.Name, pod, last.Message)
		}
	}
	return fmt.Sprintf("StatefulSet %s has not created pod %s", st.live.Name, pod)
}

func eventTime(e *corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// missingSecret returns which Secret mounted by the pod template does not
// exist (the user's TLS Secrets, say), or "".
func (m *Manager[O]) missingSecret(ctx context.Context, sts *appsv1.StatefulSet) string {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		s := v.Secret
		if s == nil || s.SecretName == "" || (s.Optional != nil && *s.Optional) {
			continue
		}
		_, err := m.kube.CoreV1().Secrets(sts.Namespace).Get(ctx, s.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("Secret %s, mounted by the pods of %s as volume %s, does not exist", s.SecretName, sts.Name, v.Name)
		}
	}
	return ""
}

// whyNotRunning reads a pod's own status: scheduling, then containers.
func whyNotRunning(clusterScheduler string, p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("pod %s is not scheduled: %s: %s", p.Name, c.Reason, c.Message)
		}
	}
	if p.Spec.NodeName == "" {
		return fmt.Sprintf("pod %s is not scheduled: no scheduler has taken it (schedulerName %q)", p.Name, schedulerName(clusterScheduler, p))
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("pod %s: container %s is waiting: %s: %s", p.Name, cs.Name, w.Reason, w.Message)
		}
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("pod %s: container %s exited with code %d: %s", p.Name, cs.Name, t.ExitCode, t.Reason)
		}
	}
	return fmt.Sprintf("pod %s is %s and not Ready", p.Name, p.Status.Phase)
}

func schedulerName(clusterScheduler string, p *corev1.Pod) string {
	if p.Spec.SchedulerName != "" {
		return p.Spec.SchedulerName
	}
	return clusterScheduler
}
