package apply

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// SetPVCAttributesClass moves the PVC name to the VolumeAttributesClass
// class (spec.volumeAttributesClassName); the storage driver then modifies
// the volume and reports the class in status.currentVolumeAttributesClassName.
// A refusal is a Warning FailedPatch event and the error.
func (a *Applier) SetPVCAttributesClass(ctx context.Context, owner Owner, name, class string) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"volumeAttributesClassName": class}})
	_, err := a.kube.CoreV1().PersistentVolumeClaims(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return a.recordPatch(ctx, owner, "PersistentVolumeClaim", name, err)
}

// OrphanStatefulSet deletes the StatefulSet name (only while its UID is
// uid) leaving its pods and PVCs in place, for the reason given: the next
// sync creates it again with the new volume claim templates, and the
// StatefulSet controller adopts the running pods without restarting them.
func (a *Applier) OrphanStatefulSet(ctx context.Context, owner Owner, name string, uid types.UID, reason string) error {
	orphan := metav1.DeletePropagationOrphan
	err := a.kube.AppsV1().StatefulSets(owner.GetNamespace()).Delete(ctx, name,
		metav1.DeleteOptions{PropagationPolicy: &orphan, Preconditions: UIDIs(uid)})
	return a.recordDelete(ctx, owner, "StatefulSet", name, reason, err)
}
