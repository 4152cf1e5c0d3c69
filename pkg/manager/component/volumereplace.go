package component

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// VolumeReplacer components can replace a member's volumes (spec §6.4,
// tidb.pingcap.com/replace-volume: PD, TiKV, TiFlash, TiDB). The skeleton
// finds the request on the pod, adds the spare pods, lets the component take
// the member out of its cluster, then deletes the member's PVCs and its pod
// so that the StatefulSet creates it again on fresh volumes
// (volumereplace.go). Without it the annotation is ignored.
type VolumeReplacer[O Owner] interface {
	// PrepareVolumeReplace takes the member of pod out of its cluster (PD:
	// leadership moved off, member deleted; TiKV/TiFlash: store deleted and
	// Tombstone) and returns nil only once the member's data may be
	// deleted; a flow.RequeueError to wait (the skeleton turns it into a
	// revisit), any other error to retry with backoff.
	PrepareVolumeReplace(ctx context.Context, tc O, pod *corev1.Pod) error
	// SpareVolumeReplicas is how many extra pods the component runs while a
	// member's volumes are replaced (spec.<component>.spareVolReplaceReplicas).
	SpareVolumeReplicas(tc O) int32
}

// ConditionVolumeReplacing is the component condition
// (status.<component>.conditions) True while a member's volumes are being
// replaced, with the step it is at; status.<component>.volReplaceInProgress
// says the same as a bool, as the TiDB Operator's status does.
const ConditionVolumeReplacing = "ComponentVolumeReplacing"

// Event and condition reasons of volume replacement.
const (
	// ReasonReplaceVolumeStarted (Normal event, condition True): a pod asks for its volumes to be replaced.
	ReasonReplaceVolumeStarted = "ReplaceVolumeStarted"
	// ReasonReplaceVolumeWaiting (condition True): the replacement waits (spare pods, PD, a Tombstone).
	ReasonReplaceVolumeWaiting = "ReplaceVolumeWaiting"
	// ReasonReplaceVolumeRefused (Warning event): the member cannot leave now without
	// breaking PD's quorum or the stores' replicas; the request stays and is looked at again.
	ReasonReplaceVolumeRefused = "ReplaceVolumeRefused"
	// ReasonReplaceVolumePodDeleted (Normal event): the member left its cluster; its PVCs and
	// pod were deleted and the StatefulSet creates it again on fresh volumes.
	ReasonReplaceVolumePodDeleted = "ReplaceVolumePodDeleted"
	// ReasonReplaceVolumeFinished (Normal event): no member of the component asks for a replacement any more
	// and every pod of the component, the replaced one on its fresh volumes included, is back (Ready, healthy).
	ReasonReplaceVolumeFinished = "ReplaceVolumeFinished"
)

// replaceRecheck is how soon a replacement that waits is looked at again
// (the TiDB Operator rechecks a Tombstone every 15 s).
const replaceRecheck = 5 * time.Second

// replaceRequested reports whether p asks for its volumes to be replaced.
func replaceRequested(p *corev1.Pod) bool {
	return p != nil && p.DeletionTimestamp == nil && p.Annotations[label.AnnReplaceVolume] == label.ReplaceVolumeTrue
}

// firstReplaceRequest returns the lowest ordinal whose pod asks for a
// replacement, or -1. With log, other values of the annotation are logged
// (they are ignored).
func firstReplaceRequest(ctx context.Context, pods map[int32]*corev1.Pod, log bool) int32 {
	ordinals := make([]int32, 0, len(pods))
	for o := range pods {
		ordinals = append(ordinals, o)
	}
	slices.Sort(ordinals)
	for _, o := range ordinals {
		if replaceRequested(pods[o]) {
			return o
		}
		if v, ok := pods[o].Annotations[label.AnnReplaceVolume]; ok && log && v != label.ReplaceVolumeTrue {
			klog.FromContext(ctx).Info("ignoring a replace-volume annotation with an unknown value", "pod", pods[o].Name, "value", v)
		}
	}
	return -1
}

// spareReplicas is the number of extra pods a replacement in progress asks
// for: the component's spare count while one of its pods carries the
// request or the replaced pod is not back yet (the ComponentVolumeReplacing
// condition is still set), else 0. It is re-derived from the pods and the
// status on every sync, so an operator restarted mid-way keeps the spares
// until the replacement finished.
func (m *Manager[O]) spareReplicas(ctx context.Context, tc O, pods map[int32]*corev1.Pod) int32 {
	r, ok := m.comp.(VolumeReplacer[O])
	replacing := meta.FindStatusCondition(m.comp.Status(tc).Conditions, ConditionVolumeReplacing) != nil
	if !ok || (!replacing && firstReplaceRequest(ctx, pods, false) < 0) {
		return 0
	}
	return max(r.SpareVolumeReplicas(tc), 0)
}

// replaceVolumes carries out one step of the lowest-ordinal pod's
// replace-volume request per sync, one member at a time: wait for the
// spare pods and every other member to be available, let the component
// take the member out of its cluster, then delete the member's PVCs and
// its pod. The replacement is finished (condition removed,
// volReplaceInProgress false, ReplaceVolumeFinished) only once no pod asks
// for one and every pod is back: not terminating, Ready and healthy, the
// replaced one on its fresh volumes (finishReplace). With spec.enablePVCReplace it first asks for the replacements a
// volume change that cannot be made in place needs (volumereplacepvc.go).
// Waits are revisits (flow.RevisitAfter) so the scale-out of the spares
// in the same sync is never held back.
func (m *Manager[O]) replaceVolumes(ctx context.Context, st *syncState[O]) error {
	r, ok := m.comp.(VolumeReplacer[O])
	if !ok || st.live == nil {
		return nil
	}
	pods, err := m.podsByOrdinal(st)
	if err != nil {
		return err
	}
	status := m.comp.Status(st.tc)
	prev := meta.FindStatusCondition(status.Conditions, ConditionVolumeReplacing)
	ordinal := firstReplaceRequest(ctx, pods, true)
	status.VolReplaceInProgress = ordinal >= 0
	if ordinal < 0 {
		if prev != nil && !m.finishReplace(ctx, st, pods) {
			return nil
		}
		return m.requestPVCReplace(ctx, st, pods)
	}
	pod := pods[ordinal]
	if prev == nil {
		m.eventf(st.tc, corev1.EventTypeNormal, ReasonReplaceVolumeStarted,
			"replacing the volumes of %s: the member leaves, then its PVCs and pod are deleted", pod.Name)
	}
	msg, err := m.replaceStep(ctx, st, r, pods, ordinal)
	if err != nil {
		return err
	}
	m.replacing(ctx, st, msg)
	return nil
}

// finishReplace ends a replacement no pod asks for any more once every pod
// of the component is back (see replaceBlocked), and reports whether it
// did; until then the replacement stays in progress and says what it
// waits for.
func (m *Manager[O]) finishReplace(ctx context.Context, st *syncState[O], pods map[int32]*corev1.Pod) bool {
	if why := m.replaceBlocked(ctx, st, pods, -1); why != "" {
		m.comp.Status(st.tc).VolReplaceInProgress = true
		m.replacing(ctx, st, fmt.Sprintf("volume replacement waits for every %s pod to be back on its volumes: %s", m.comp.Name(), why))
		return false
	}
	meta.RemoveStatusCondition(&m.comp.Status(st.tc).Conditions, ConditionVolumeReplacing)
	m.eventf(st.tc, corev1.EventTypeNormal, ReasonReplaceVolumeFinished,
		"no %s pod asks for its volumes to be replaced any more and every pod is back", m.comp.Name())
	return true
}

// replacing sets the ComponentVolumeReplacing condition to msg and asks
// for a revisit.
func (m *Manager[O]) replacing(ctx context.Context, st *syncState[O], msg string) {
	status := m.comp.Status(st.tc)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: ConditionVolumeReplacing, Status: metav1.ConditionTrue,
		Reason: ReasonReplaceVolumeWaiting, Message: msg, ObservedGeneration: st.tc.GetGeneration()})
	flow.RevisitAfter(ctx, replaceRecheck, "%s", msg)
}

// replaceStep does what the request of ordinal allows now and says what
// it waits for.
func (m *Manager[O]) replaceStep(ctx context.Context, st *syncState[O], r VolumeReplacer[O], pods map[int32]*corev1.Pod, ordinal int32) (string, error) {
	pod := pods[ordinal]
	if why := m.replaceBlocked(ctx, st, pods, ordinal); why != "" {
		return fmt.Sprintf("volume replacement of %s waits: %s", pod.Name, why), nil
	}
	err := r.PrepareVolumeReplace(ctx, st.tc, pod)
	if re, waiting := flow.AsRequeue(err); waiting {
		return fmt.Sprintf("volume replacement of %s waits: %s", pod.Name, re.Reason), nil
	}
	if err != nil {
		return "", fmt.Errorf("volume replacement of %s: %w", pod.Name, err)
	}
	if err := m.dropMemberVolumes(ctx, st, ordinal, pod); err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted the PVCs and pod of %s; the StatefulSet creates it again on fresh volumes", pod.Name), nil
}

// replaceBlocked says why the member of ordinal may not leave yet ("" when
// it may): the spare pods are not all there, or another pod of the
// component is not available (there, not terminating, Ready and healthy),
// because a member leaves only while every other one serves. With ordinal
// -1 it says why not every pod is available.
func (m *Manager[O]) replaceBlocked(ctx context.Context, st *syncState[O], pods map[int32]*corev1.Pod, ordinal int32) string {
	want := m.comp.Replicas(st.tc) + m.failoverReplicas(st.tc) + m.spareReplicas(ctx, st.tc, pods)
	if st.live.Spec.Replicas == nil || *st.live.Spec.Replicas < want {
		return fmt.Sprintf("adding spare pod(s): %d of %d pods", replicasOf(st), want)
	}
	health, _ := m.comp.(HealthChecker[O])
	for o := int32(0); o < want; o++ {
		if o == ordinal {
			continue
		}
		p, ok := pods[o]
		switch {
		case !ok || !PodReady(p):
			return fmt.Sprintf("pod %s-%d is not Ready", st.live.Name, o)
		case p.DeletionTimestamp != nil:
			return fmt.Sprintf("pod %s is terminating", p.Name)
		case health != nil && !health.PodHealthy(st.tc, p.Name):
			return fmt.Sprintf("%s is not healthy", p.Name)
		}
	}
	return ""
}

func replicasOf[O Owner](st *syncState[O]) int32 {
	if st.live.Spec.Replicas == nil {
		return 0
	}
	return *st.live.Spec.Replicas
}

// dropMemberVolumes deletes the PVCs of the pod with ordinal (those of the
// StatefulSet's claim templates only: a PVC of additionalVolumes may be
// shared by every pod), then the pod, each under a UID precondition. A PVC created after the pod is left alone: it belongs
// to a pod the StatefulSet already created again, which a lagging cache
// may not show yet.
func (m *Manager[O]) dropMemberVolumes(ctx context.Context, st *syncState[O], ordinal int32, pod *corev1.Pod) error {
	why := fmt.Sprintf("%s=%s: the member left its cluster", label.AnnReplaceVolume, label.ReplaceVolumeTrue)
	claims := m.claimNames(st.tc, st.live.Spec.VolumeClaimTemplates, ordinal)
	var deleted []string
	for _, name := range claims {
		pvc, err := m.pvcs.PersistentVolumeClaims(st.tc.GetNamespace()).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("get PVC %s: %w", name, err)
		}
		if pvc.DeletionTimestamp != nil || pvc.CreationTimestamp.After(pod.CreationTimestamp.Time) {
			continue
		}
		if err := m.writer.DeletePVC(ctx, st.tc, name, apply.UIDIs(pvc.UID), why); err != nil {
			return err
		}
		deleted = append(deleted, name)
	}
	if err := m.writer.DeletePod(ctx, st.tc, pod.Name, apply.UIDIs(pod.UID), why); err != nil {
		return err
	}
	m.eventf(st.tc, corev1.EventTypeNormal, ReasonReplaceVolumePodDeleted,
		"%s left its cluster; deleted its PVC(s) %v and the pod: the StatefulSet creates it again on fresh volumes", pod.Name, deleted)
	return nil
}

// observedSpares is spareReplicas for the phase observe computes; the pods
// are listed only for a component that can replace volumes, and only once
// its StatefulSet exists.
func (m *Manager[O]) observedSpares(ctx context.Context, st *syncState[O]) int32 {
	if _, ok := m.comp.(VolumeReplacer[O]); !ok || st.live == nil || m.pods == nil {
		return 0
	}
	pods, err := m.podsByOrdinal(st)
	if err != nil {
		return 0
	}
	return m.spareReplicas(ctx, st.tc, pods)
}
