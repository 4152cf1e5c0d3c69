package component

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/planner"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// claimNames returns the PVC names of ordinal for the StatefulSet's volume
// claim templates.
func (m *Manager[O]) claimNames(tc O, templates []corev1.PersistentVolumeClaim, ordinal int32) []string {
	return podClaimNames(templates, names.Pod(tc.GetName(), m.comp.Name(), ordinal))
}

// podClaimNames returns the names the StatefulSet controller gives the PVCs
// of its volume claim templates for the pod named pod: "<template>-<pod>".
// They are the member's own claims; PVCs of additionalVolumes are not.
func podClaimNames(templates []corev1.PersistentVolumeClaim, pod string) []string {
	var out []string
	for _, t := range templates {
		out = append(out, t.Name+"-"+pod)
	}
	return out
}

// ReasonPVCDeferDeleting is the Normal event reason recorded when a scaled-in
// member's PVC is kept and marked tidb.pingcap.com/pvc-defer-deleting.
const ReasonPVCDeferDeleting = "PVCDeferDeleting"

// ReasonVolumeDeleting is the Warning event reason recorded when a restart
// is held back because the pod's data PVC is being deleted.
const ReasonVolumeDeleting = "DataVolumeDeleting"

// guardDeletingVolumes refuses an action that would restart a pod whose PVC
// is being deleted: pvc-protection holds such a PVC only while its pod
// runs, so a restart would let the data go and the member come back empty.
// It records a Warning event and waits until the member's data is safe
// elsewhere or someone deletes the pod knowingly.
func (m *Manager[O]) guardDeletingVolumes(st *syncState[O], c planner.Component, a planner.Action) error {
	var from, to int32
	switch a.Kind {
	case planner.UpgradePod:
		from, to = a.Ordinal, a.Ordinal+1
	case planner.ForceUpgrade:
		from, to = 0, c.Replicas
	default:
		return nil
	}
	for o := from; o < to; o++ {
		for _, name := range m.claimNames(st.tc, st.live.Spec.VolumeClaimTemplates, o) {
			pvc, err := m.pvcs.PersistentVolumeClaims(st.tc.GetNamespace()).Get(name)
			if err != nil || pvc.DeletionTimestamp == nil {
				continue
			}
			pod := names.Pod(st.tc.GetName(), m.comp.Name(), o)
			msg := fmt.Sprintf("pod %s is not restarted: its PVC %s is being deleted and would take the member's data with it; "+
				"move the data off the member first (scale in, or let failover replace it), or delete the pod yourself "+
				"once the data may go: it then starts empty", pod, name)
			m.recorder.Event(st.tc, corev1.EventTypeWarning, ReasonVolumeDeleting, msg)
			return flow.RequeueAfter(time.Minute, "%s", msg)
		}
	}
	return nil
}

// deferDeletePVCs marks the PVCs of a scaled-in ordinal with
// tidb.pingcap.com/pvc-defer-deleting: they are kept (data is never
// deleted at scale-in), and a later scale-out to that ordinal will not
// reuse them.
func (m *Manager[O]) deferDeletePVCs(ctx context.Context, tc O, ordinal int32) error {
	live, err := m.sts.StatefulSets(tc.GetNamespace()).Get(names.Member(tc.GetName(), m.comp.Name()))
	if err != nil {
		return err
	}
	for _, name := range m.claimNames(tc, live.Spec.VolumeClaimTemplates, ordinal) {
		pvc, err := m.pvcs.PersistentVolumeClaims(tc.GetNamespace()).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if _, ok := pvc.Annotations[label.AnnPVCDeferDeleting]; ok {
			continue
		}
		if err := m.writer.AnnotatePVC(ctx, tc, name, map[string]string{
			label.AnnPVCDeferDeleting: m.clock.Now().UTC().Format(time.RFC3339),
		}); err != nil {
			return fmt.Errorf("mark PVC %s defer-deleting: %w", name, err)
		}
		m.eventf(tc, corev1.EventTypeNormal, ReasonPVCDeferDeleting,
			"PVC %s of the removed %s member kept and marked for deferred deletion; a later scale-out starts on a fresh volume", name, m.comp.Name())
	}
	return nil
}

// dropStalePVCs deletes PVCs marked defer-deleting of the ordinals a
// scale-out is about to create, so a new member never starts on the data
// of a removed one, and waits until they are gone.
func (m *Manager[O]) dropStalePVCs(ctx context.Context, tc O, from, to int32) error {
	live, err := m.sts.StatefulSets(tc.GetNamespace()).Get(names.Member(tc.GetName(), m.comp.Name()))
	if err != nil {
		return err
	}
	stale := 0
	for o := from; o < to; o++ {
		for _, name := range m.claimNames(tc, live.Spec.VolumeClaimTemplates, o) {
			pvc, err := m.pvcs.PersistentVolumeClaims(tc.GetNamespace()).Get(name)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			if _, ok := pvc.Annotations[label.AnnPVCDeferDeleting]; !ok {
				continue
			}
			stale++
			if pvc.DeletionTimestamp != nil {
				continue
			}
			if err := m.writer.DeletePVC(ctx, tc, name, apply.UIDIs(pvc.UID), "of a removed member, before scaling out"); err != nil {
				return err
			}
		}
	}
	if stale > 0 {
		return flow.Requeue("waiting for %d stale PVC(s) of removed members to be deleted", stale)
	}
	return nil
}
