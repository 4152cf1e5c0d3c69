package workload

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/label"
)

// reclaim gives the PV of every bound PVC of the workload (selected by
// r.PodLabels) the reclaim policy r.PVReclaimPolicy (Retain when empty),
// and labels it (managed-by, instance, component, namespace) so the PV
// cache sees it. A PV already so is not written; without PV and PVC caches
// (a namespaced operator, -manage-persistent-volumes=false) nothing is done.
func (s *Syncer) reclaim(ctx context.Context, r Request) error {
	if s.PVs == nil || s.PVCs == nil || len(r.PodLabels) == 0 {
		return nil
	}
	policy := r.PVReclaimPolicy
	if policy == "" {
		policy = corev1.PersistentVolumeReclaimRetain
	}
	ns := r.Owner.GetNamespace()
	pvcs, err := s.PVCs.PersistentVolumeClaims(ns).List(labels.SelectorFromSet(r.PodLabels))
	if err != nil {
		return fmt.Errorf("list PVCs: %w", err)
	}
	for _, pvc := range pvcs {
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" || pvc.DeletionTimestamp != nil {
			continue
		}
		want := map[string]string{
			label.ManagedByLabelKey: label.TiDBOperator,
			label.InstanceLabelKey:  r.Owner.GetName(),
			label.ComponentLabelKey: r.PodLabels[label.ComponentLabelKey],
			label.NamespaceLabelKey: ns,
		}
		pv, err := s.PVs.Get(pvc.Spec.VolumeName)
		if err == nil && pv.Spec.PersistentVolumeReclaimPolicy == policy && labels.SelectorFromSet(want).Matches(labels.Set(pv.Labels)) {
			continue
		}
		if err := s.Writer.PatchPV(ctx, r.Owner, pvc.Spec.VolumeName, policy, want, nil); err != nil {
			return fmt.Errorf("set reclaim policy %s on PV %s of PVC %s: %w", policy, pvc.Spec.VolumeName, pvc.Name, err)
		}
	}
	return nil
}
