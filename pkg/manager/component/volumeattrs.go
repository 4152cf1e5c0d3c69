package component

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// ConditionVolumeModifying is the component condition
// (status.<component>.conditions) True while PVCs move to a changed
// VolumeAttributesClass, False with ReasonVolumeModifyInfeasible when the
// storage driver refuses the class.
const ConditionVolumeModifying = "ComponentVolumeModifying"

// Event and condition reasons of VolumeAttributesClass changes (feature
// gate VolumeModifying).
const (
	// ReasonVolumeModifying (Normal event, condition True): the operator moved a PVC to the new class.
	ReasonVolumeModifying = "VolumeModifying"
	// ReasonVolumeModified (Normal event): every PVC of the component is in the class its spec asks for.
	ReasonVolumeModified = "VolumeModified"
	// ReasonVolumeModifyInfeasible (Warning event, condition False): the driver reports the class infeasible.
	ReasonVolumeModifyInfeasible = "VolumeModifyInfeasible"
	// ReasonStatefulSetRecreating (Normal event): the StatefulSet is deleted, its pods and PVCs
	// kept, so that it is created again with the new class in its volume claim templates.
	ReasonStatefulSetRecreating = "StatefulSetRecreating"
)

// classClaim is one PVC of a wanted member next to the class its template asks for.
type classClaim struct {
	ordinal int32
	pvc     *corev1.PersistentVolumeClaim
	want    string
}

// asked reports whether the PVC's spec already names the class wanted.
func (c classClaim) asked() bool { return deref(c.pvc.Spec.VolumeAttributesClassName) == c.want }

// modified reports whether the driver reports the class wanted as current.
func (c classClaim) modified() bool {
	return deref(c.pvc.Status.CurrentVolumeAttributesClassName) == c.want && c.pvc.Status.ModifyVolumeStatus == nil
}

// infeasible reports whether the driver refused the class the PVC asks for.
func (c classClaim) infeasible() bool {
	s := c.pvc.Status.ModifyVolumeStatus
	return s != nil && s.Status == corev1.PersistentVolumeClaimModifyVolumeInfeasible
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// modifyClasses, with the VolumeModifying gate, moves the PVCs of the
// wanted members to the VolumeAttributesClass their templates name: one
// member at a time, the next once the driver reports the last one's class
// current. When every PVC is in its class and the component is at rest,
// a StatefulSet whose claim templates still name the old class (they are
// immutable) is deleted with its pods orphaned, and created again by the
// next sync: no pod restarts, and new members get the new class. Without
// the gate such a change is named in the Unsupported condition instead.
func (m *Manager[O]) modifyClasses(ctx context.Context, st *syncState[O]) error {
	if !m.volumeModifying || st.live == nil || st.desired == nil {
		return nil
	}
	claims := m.classClaims(st)
	status := m.comp.Status(st.tc)
	prev := meta.FindStatusCondition(status.Conditions, ConditionVolumeModifying)
	cond, err := m.modify(ctx, st, claims)
	if err != nil {
		return err
	}
	switch {
	case cond == nil && prev != nil && prev.Status == metav1.ConditionTrue:
		m.eventf(st.tc, corev1.EventTypeNormal, ReasonVolumeModified, "every %s PVC is in the VolumeAttributesClass its spec names", m.comp.Name())
	case cond != nil && cond.Reason == ReasonVolumeModifyInfeasible && (prev == nil || prev.Message != cond.Message):
		m.eventf(st.tc, corev1.EventTypeWarning, ReasonVolumeModifyInfeasible, "%s", cond.Message)
	}
	if cond != nil {
		cond.ObservedGeneration = st.tc.GetGeneration()
		meta.SetStatusCondition(&status.Conditions, *cond)
		return nil
	}
	meta.RemoveStatusCondition(&status.Conditions, ConditionVolumeModifying)
	return m.recreateForClasses(ctx, st)
}

// classClaims returns the PVCs of ordinals below the live replicas whose
// desired template names a class, in ordinal order.
func (m *Manager[O]) classClaims(st *syncState[O]) []classClaim {
	var out []classClaim
	for o := int32(0); o < *st.live.Spec.Replicas; o++ {
		for _, t := range st.desired.Spec.VolumeClaimTemplates {
			want := classOf(t)
			if want == "" {
				continue // a class cannot be taken off a PVC; an unset one asks for nothing
			}
			pvc, err := m.pvcs.PersistentVolumeClaims(st.tc.GetNamespace()).Get(m.claimNames(st.tc, []corev1.PersistentVolumeClaim{t}, o)[0])
			if err != nil || pvc.DeletionTimestamp != nil {
				continue
			}
			if _, deferred := pvc.Annotations[label.AnnPVCDeferDeleting]; deferred {
				continue
			}
			out = append(out, classClaim{ordinal: o, pvc: pvc, want: want})
		}
	}
	return out
}

// modify moves the PVCs of the first member not in its classes, once no
// earlier modification is in flight, and returns the condition to report
// (nil: every PVC is in its class).
func (m *Manager[O]) modify(ctx context.Context, st *syncState[O], claims []classClaim) (*metav1.Condition, error) {
	var infeasible, modifying []string
	next := int32(-1)
	for _, c := range claims {
		switch {
		case c.asked() && c.infeasible():
			infeasible = append(infeasible, fmt.Sprintf("PVC %s: the storage driver finds VolumeAttributesClass %s infeasible", c.pvc.Name, c.want))
		case c.asked() && !c.modified():
			modifying = append(modifying, c.pvc.Name)
		case !c.asked() && next < 0:
			next = c.ordinal
		}
	}
	if len(infeasible) > 0 {
		sort.Strings(infeasible)
		return &metav1.Condition{Type: ConditionVolumeModifying, Status: metav1.ConditionFalse, Reason: ReasonVolumeModifyInfeasible,
			Message: strings.Join(infeasible, "; ")}, nil
	}
	if len(modifying) == 0 && next >= 0 {
		for _, c := range claims {
			if c.ordinal != next || c.asked() {
				continue
			}
			if err := m.writer.SetPVCAttributesClass(ctx, st.tc, c.pvc.Name, c.want); err != nil {
				return nil, err
			}
			m.eventf(st.tc, corev1.EventTypeNormal, ReasonVolumeModifying, "moving PVC %s from VolumeAttributesClass %q to %q",
				c.pvc.Name, deref(c.pvc.Spec.VolumeAttributesClassName), c.want)
			modifying = append(modifying, c.pvc.Name)
		}
	}
	if len(modifying) == 0 {
		return nil, nil
	}
	flow.RevisitAfter(ctx, resizeRecheck, "%s: waiting for PVC(s) %s to reach their VolumeAttributesClass", m.comp.Name(), strings.Join(modifying, ", "))
	return &metav1.Condition{Type: ConditionVolumeModifying, Status: metav1.ConditionTrue, Reason: ReasonVolumeModifying,
		Message: "the storage driver is modifying PVC(s) " + strings.Join(modifying, ", ")}, nil
}

// recreateForClasses deletes, pods orphaned, a StatefulSet at rest whose
// claim templates name other classes than the desired ones, so that the
// next sync creates it with the desired templates.
func (m *Manager[O]) recreateForClasses(ctx context.Context, st *syncState[O]) error {
	drifted := DriftedAttributesClasses(m.comp.Name(), st.desired.Spec.VolumeClaimTemplates, st.live.Spec.VolumeClaimTemplates)
	if len(drifted) == 0 || !atRest(st.live, m.comp.Replicas(st.tc)) {
		return nil
	}
	return m.recreateStatefulSet(ctx, st,
		"its volume claim templates name another VolumeAttributesClass ("+strings.Join(drifted, ", ")+")", "")
}

// recreateStatefulSet deletes the live StatefulSet with its pods and PVCs
// orphaned (UID-guarded), says why (reason) and what follows (then, may be
// empty) in a Normal event, and ends the sync with a wait: the next sync
// creates it with the desired templates. API errors are returned.
func (m *Manager[O]) recreateStatefulSet(ctx context.Context, st *syncState[O], reason, then string) error {
	if err := m.writer.OrphanStatefulSet(ctx, st.tc, st.live.Name, st.live.UID, reason); err != nil {
		return err
	}
	next := "it is created again with the new templates"
	if then != "" {
		next += ", " + then
	}
	m.eventf(st.tc, corev1.EventTypeNormal, ReasonStatefulSetRecreating,
		"deleted StatefulSet %s keeping its pods and PVCs: %s; %s", st.live.Name, reason, next)
	return flow.Requeue("StatefulSet %s deleted to be created again with the new volume claim templates", st.live.Name)
}

// atRest reports a StatefulSet that is neither scaling nor rolling out.
func atRest(sts *appsv1.StatefulSet, replicas int32) bool {
	s := sts.Status
	return sts.Spec.Replicas != nil && *sts.Spec.Replicas == replicas && s.ObservedGeneration >= sts.Generation &&
		s.Replicas == replicas && s.ReadyReplicas == replicas && s.UpdatedReplicas == replicas &&
		(s.UpdateRevision == "" || s.UpdateRevision == s.CurrentRevision)
}
