package simulator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// AnnInfeasibleClass on a VolumeAttributesClass makes the simulated driver
// refuse it, as a CSI driver refuses parameters it cannot apply.
const AnnInfeasibleClass = "simulator.kubetidb.io/infeasible"

// needsModify reports whether pvc is Bound and names a VolumeAttributesClass
// its status does not report as current.
func needsModify(pvc *corev1.PersistentVolumeClaim) bool {
	want := pvc.Spec.VolumeAttributesClassName
	if want == nil || *want == "" || pvc.Status.Phase != corev1.ClaimBound {
		return false
	}
	cur := pvc.Status.CurrentVolumeAttributesClassName
	return cur == nil || *cur != *want || pvc.Status.ModifyVolumeStatus != nil
}

// modify plays the CSI external-resizer's ControllerModifyVolume for the
// PVC key: a class that exists becomes current (status
// currentVolumeAttributesClassName, no modifyVolumeStatus); a missing class
// leaves the modification Pending, and a class annotated AnnInfeasibleClass
// is reported Infeasible — the three outcomes Kubernetes defines.
func (r *resizer) modify(ctx context.Context, key types.NamespacedName) error {
	pvc, err := r.pvcs.PersistentVolumeClaims(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !needsModify(pvc) {
		return err
	}
	want := *pvc.Spec.VolumeAttributesClassName
	pvc = pvc.DeepCopy()
	vac, err := r.kube.StorageV1().VolumeAttributesClasses().Get(ctx, want, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		pvc.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: want,
			Status: corev1.PersistentVolumeClaimModifyVolumePending}
	case err != nil:
		return fmt.Errorf("get VolumeAttributesClass %s: %w", want, err)
	case vac.Annotations[AnnInfeasibleClass] == "true":
		pvc.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: want,
			Status: corev1.PersistentVolumeClaimModifyVolumeInfeasible}
	default:
		pvc.Status.CurrentVolumeAttributesClassName = &want
		pvc.Status.ModifyVolumeStatus = nil
	}
	if _, err := r.kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("modify PVC: %w", err)
	}
	r.log.Info("PVC modified", "pvc", key, "class", want, "status", pvc.Status.ModifyVolumeStatus)
	return nil
}
