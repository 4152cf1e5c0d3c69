package component

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// ConditionVolumeResizing is the component condition (status.<component>.conditions)
// the TiDB Operator names ComponentVolumeResizing: True while PVCs grow to a
// larger requested size, False with a reason when they cannot.
const ConditionVolumeResizing = "ComponentVolumeResizing"

// Event and condition reasons of volume resizing.
const (
	// ReasonVolumeResizing (Normal event, condition True): the operator asked for a larger PVC.
	ReasonVolumeResizing = "VolumeResizing"
	// ReasonVolumeResized (Normal event, condition False): every PVC of the component has its requested size.
	ReasonVolumeResized = "VolumeResized"
	// ReasonVolumeResizeRefused (Warning event, condition False): a PVC cannot grow (its StorageClass does
	// not allow expansion) or was asked to shrink, which Kubernetes does not do.
	ReasonVolumeResizeRefused = "VolumeResizeRefused"
)

// resizeRecheck is how soon a sync comes back to a PVC the storage driver is expanding.
const resizeRecheck = 10 * time.Second

// liveClaim is one PVC of a wanted member next to the size its template asks for.
type liveClaim struct {
	ordinal  int32
	volume   string // the volume claim template's name
	pvc      *corev1.PersistentVolumeClaim
	want     resource.Quantity
	wantSC   string
	request  resource.Quantity // spec.resources.requests.storage
	capacity resource.Quantity // status.capacity.storage
}

// grown reports whether the PVC already has the size wanted.
func (c liveClaim) grown() bool { return c.capacity.Cmp(c.want) >= 0 }

// asked reports whether the PVC's request is already at least the size wanted.
func (c liveClaim) asked() bool { return c.request.Cmp(c.want) >= 0 }

// shrink reports whether the template asks for less than the PVC has.
func (c liveClaim) shrink() bool { return c.request.Cmp(c.want) > 0 }

// volumes fills status.<component>.volumes from the PVCs of the wanted
// members and grows PVCs whose template asks for more storage: one member
// at a time, the next only once the storage driver expanded the last, and
// only where the StorageClass allows expansion. It never holds up later
// members of the sync: an expansion in progress asks for a revisit.
func (m *Manager[O]) volumes(ctx context.Context, st *syncState[O]) error {
	if st.live == nil || st.desired == nil {
		return nil
	}
	claims := m.claims(st)
	status := m.comp.Status(st.tc)
	status.Volumes = volumeStatus(claims)
	prev := meta.FindStatusCondition(status.Conditions, ConditionVolumeResizing)
	cond, err := m.resize(ctx, st, claims)
	if err != nil {
		return err
	}
	switch {
	case cond == nil && prev != nil && prev.Status == metav1.ConditionTrue:
		m.eventf(st.tc, corev1.EventTypeNormal, ReasonVolumeResized, "every %s PVC has its requested size", m.comp.Name())
	case cond != nil && cond.Reason == ReasonVolumeResizeRefused && (prev == nil || prev.Message != cond.Message):
		m.eventf(st.tc, corev1.EventTypeWarning, ReasonVolumeResizeRefused, "%s", cond.Message)
	}
	if cond == nil {
		meta.RemoveStatusCondition(&status.Conditions, ConditionVolumeResizing)
		return m.modifyClasses(ctx, st) // a class change waits for every resize
	}
	cond.ObservedGeneration = st.tc.GetGeneration()
	meta.SetStatusCondition(&status.Conditions, *cond)
	return nil
}

// claims returns the PVCs of ordinals below the live replicas for every
// desired volume claim template that asks for a size, in ordinal order.
func (m *Manager[O]) claims(st *syncState[O]) []liveClaim {
	var out []liveClaim
	for o := int32(0); o < *st.live.Spec.Replicas; o++ {
		for _, t := range st.desired.Spec.VolumeClaimTemplates {
			want, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]
			if !ok {
				continue
			}
			pvc, err := m.pvcs.PersistentVolumeClaims(st.tc.GetNamespace()).Get(m.claimNames(st.tc, []corev1.PersistentVolumeClaim{t}, o)[0])
			if err != nil || pvc.DeletionTimestamp != nil {
				continue
			}
			if _, deferred := pvc.Annotations[label.AnnPVCDeferDeleting]; deferred {
				continue
			}
			c := liveClaim{ordinal: o, volume: t.Name, pvc: pvc, want: want,
				request: pvc.Spec.Resources.Requests[corev1.ResourceStorage], capacity: pvc.Status.Capacity[corev1.ResourceStorage]}
			if t.Spec.StorageClassName != nil {
				c.wantSC = *t.Spec.StorageClassName
			}
			out = append(out, c)
		}
	}
	return out
}

// volumeStatus summarises claims by volume: Bound PVCs, the smallest
// capacity seen and how many PVCs have it, the size wanted and how many
// PVCs reached it.
func volumeStatus(claims []liveClaim) map[v1alpha1.StorageVolumeName]*v1alpha1.StorageVolumeStatus {
	if len(claims) == 0 {
		return nil
	}
	out := map[v1alpha1.StorageVolumeName]*v1alpha1.StorageVolumeStatus{}
	for _, c := range claims {
		name := v1alpha1.StorageVolumeName(c.volume)
		s, ok := out[name]
		if !ok {
			s = &v1alpha1.StorageVolumeStatus{Name: name, ModifiedCapacity: c.want, ModifiedStorageClass: c.wantSC,
				CurrentCapacity: c.capacity, CurrentStorageClass: storageClass(c.pvc)}
			out[name] = s
		}
		if c.pvc.Status.Phase == corev1.ClaimBound {
			s.BoundCount++
		}
		if c.grown() {
			s.ModifiedCount++
		}
		switch c.capacity.Cmp(s.CurrentCapacity) {
		case -1:
			s.CurrentCapacity, s.CurrentCount = c.capacity, 1
		case 0:
			s.CurrentCount++
		}
	}
	return out
}

func storageClass(pvc *corev1.PersistentVolumeClaim) string {
	if pvc.Spec.StorageClassName == nil {
		return ""
	}
	return *pvc.Spec.StorageClassName
}

// resize grows the PVCs of the first member that has PVCs smaller than
// their templates, once every earlier expansion finished, and returns the
// condition to report (nil: nothing to resize).
func (m *Manager[O]) resize(ctx context.Context, st *syncState[O], claims []liveClaim) (*metav1.Condition, error) {
	var refused, expanding []string
	next := int32(-1)
	replace := m.owner.PVCReplace(st.tc)
	for _, c := range claims {
		switch {
		case c.needsReplace() && replace:
			continue // replaced with the member's volumes (volumereplacepvc.go)
		case c.shrink():
			refused = append(refused, fmt.Sprintf("PVC %s cannot shrink from %s to %s (spec.enablePVCReplace replaces it)",
				c.pvc.Name, c.request.String(), c.want.String()))
		case c.classChanged():
			refused = append(refused, fmt.Sprintf("PVC %s cannot move from StorageClass %q to %q (spec.enablePVCReplace replaces it)",
				c.pvc.Name, storageClass(c.pvc), c.wantSC))
		case c.asked() && !c.grown() && !c.capacity.IsZero():
			expanding = append(expanding, c.pvc.Name)
		case !c.asked() && next < 0:
			next = c.ordinal
		}
	}
	if len(expanding) > 0 {
		flow.RevisitAfter(ctx, resizeRecheck, "%s: waiting for PVC(s) %s to expand", m.comp.Name(), strings.Join(expanding, ", "))
		return &metav1.Condition{Type: ConditionVolumeResizing, Status: metav1.ConditionTrue, Reason: ReasonVolumeResizing,
			Message: "the storage driver is expanding PVC(s) " + strings.Join(expanding, ", ")}, nil
	}
	if next >= 0 {
		grown, why, err := m.grow(ctx, st, claims, next)
		if err != nil {
			return nil, err
		}
		refused = append(refused, why...)
		if len(grown) > 0 {
			flow.RevisitAfter(ctx, resizeRecheck, "%s: waiting for PVC(s) %s to expand", m.comp.Name(), strings.Join(grown, ", "))
			return &metav1.Condition{Type: ConditionVolumeResizing, Status: metav1.ConditionTrue, Reason: ReasonVolumeResizing,
				Message: "asked the storage driver to expand PVC(s) " + strings.Join(grown, ", ")}, nil
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return &metav1.Condition{Type: ConditionVolumeResizing, Status: metav1.ConditionFalse, Reason: ReasonVolumeResizeRefused,
			Message: strings.Join(refused, "; ")}, nil
	}
	return nil, nil
}

// grow asks for the larger size on every PVC of ordinal whose StorageClass
// allows expansion; it returns the PVCs patched and why others were not.
func (m *Manager[O]) grow(ctx context.Context, st *syncState[O], claims []liveClaim, ordinal int32) ([]string, []string, error) {
	var grown, refused []string
	for _, c := range claims {
		if c.ordinal != ordinal || c.asked() {
			continue
		}
		if why := m.expandable(ctx, c.pvc); why != "" {
			refused = append(refused, fmt.Sprintf("PVC %s cannot grow to %s: %s", c.pvc.Name, c.want.String(), why))
			continue
		}
		if err := m.writer.ResizePVC(ctx, st.tc, c.pvc.Name, c.want); err != nil {
			return nil, nil, err
		}
		m.eventf(st.tc, corev1.EventTypeNormal, ReasonVolumeResizing, "resizing PVC %s from %s to %s",
			c.pvc.Name, c.request.String(), c.want.String())
		grown = append(grown, c.pvc.Name)
	}
	return grown, refused, nil
}

// expandable returns why pvc's StorageClass does not allow expansion, or
// "" when it does. It reads the StorageClass from the API server (a resize
// is rare; no cache is kept for it).
func (m *Manager[O]) expandable(ctx context.Context, pvc *corev1.PersistentVolumeClaim) string {
	name := storageClass(pvc)
	if name == "" {
		return "it has no StorageClass"
	}
	if m.storageClassesDenied {
		return "the operator may not read StorageClasses (" + StorageClassPermission + ")"
	}
	sc, err := m.kube.StorageV1().StorageClasses().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("its StorageClass %s does not exist", name)
	case err != nil:
		return fmt.Sprintf("its StorageClass %s could not be read: %v", name, err)
	case sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion:
		return fmt.Sprintf("its StorageClass %s does not allow volume expansion", name)
	}
	return ""
}
