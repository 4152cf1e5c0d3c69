package apply

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The writes below are the operator's only deletes and patches of pods,
// PVCs and PVs. A delete records SuccessfulDelete (batched per sync) or a
// Warning FailedDelete event on owner naming the object and why, so a user
// reading the cluster's events sees every pod and volume the operator
// removed; an object already gone counts as deleted. A patch (annotations,
// PV reclaim policy) records only its failure, as a Warning FailedPatch:
// they are bookkeeping, and an event each would double a new cluster's
// writes.

// DeletePod deletes the pod name under the preconditions pre (nil: none),
// for the reason given ("failover of PD member basic-pd-1"). A failed
// precondition is returned as the API's Conflict, wrapped.
func (a *Applier) DeletePod(ctx context.Context, owner Owner, name string, pre *metav1.Preconditions, reason string) error {
	err := a.kube.CoreV1().Pods(owner.GetNamespace()).Delete(ctx, name, metav1.DeleteOptions{Preconditions: pre})
	return a.recordDelete(ctx, owner, "Pod", name, reason, err)
}

// DeletePVC deletes the PVC name under the preconditions pre (nil: none),
// for the reason given. Callers must have made sure the data may go.
func (a *Applier) DeletePVC(ctx context.Context, owner Owner, name string, pre *metav1.Preconditions, reason string) error {
	err := a.kube.CoreV1().PersistentVolumeClaims(owner.GetNamespace()).Delete(ctx, name, metav1.DeleteOptions{Preconditions: pre})
	return a.recordDelete(ctx, owner, "PersistentVolumeClaim", name, reason, err)
}

// DeleteStatefulSet deletes the StatefulSet name in the foreground (its
// pods go first; their PVCs stay), for the reason given.
func (a *Applier) DeleteStatefulSet(ctx context.Context, owner Owner, name, reason string) error {
	foreground := metav1.DeletePropagationForeground
	err := a.kube.AppsV1().StatefulSets(owner.GetNamespace()).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &foreground})
	a.recent.seen(writeKey("StatefulSet", owner.GetNamespace(), name)) // the next create is not a repeat
	return a.recordDelete(ctx, owner, "StatefulSet", name, reason, err)
}

// ScaleStatefulSet sets the replicas of the StatefulSet name, for the
// reason given ("spec.pdms no longer lists tso"). It reads the whole object
// from the API server (the cache keeps StatefulSets without their pod
// template) and updates it, so that nothing else changes; a StatefulSet
// already at replicas is left alone, a missing one is no error.
func (a *Applier) ScaleStatefulSet(ctx context.Context, owner Owner, name string, replicas int32, reason string) error {
	c := a.kube.AppsV1().StatefulSets(owner.GetNamespace())
	live, err := c.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get StatefulSet %s/%s: %w", owner.GetNamespace(), name, err)
	}
	if live.Spec.Replicas != nil && *live.Spec.Replicas == replicas {
		return nil
	}
	live.Spec.Replicas = &replicas
	_, err = c.Update(ctx, live, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return fmt.Errorf("scale StatefulSet %s/%s: %w", owner.GetNamespace(), name, err)
	}
	recordEvent(ctx, a.recorder, owner, "Update", "StatefulSet", fmt.Sprintf("%s (%s: %d replicas)", name, reason, replicas), err)
	if err != nil {
		return fmt.Errorf("scale StatefulSet %s/%s: %w", owner.GetNamespace(), name, err)
	}
	return nil
}

// UIDIs is the precondition that the object is still the one with uid.
func UIDIs(uid types.UID) *metav1.Preconditions { return &metav1.Preconditions{UID: &uid} }

// AnnotatePod merges annotations into the pod name's annotations (a value
// of "" is kept as the empty string).
func (a *Applier) AnnotatePod(ctx context.Context, owner Owner, name string, annotations map[string]string) error {
	patch := metaPatch(nil, annotations)
	_, err := a.kube.CoreV1().Pods(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return a.recordPatch(ctx, owner, "Pod", name, err)
}

// AnnotatePVC merges annotations into the PVC name's annotations.
func (a *Applier) AnnotatePVC(ctx context.Context, owner Owner, name string, annotations map[string]string) error {
	patch := metaPatch(nil, annotations)
	_, err := a.kube.CoreV1().PersistentVolumeClaims(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return a.recordPatch(ctx, owner, "PersistentVolumeClaim", name, err)
}

// LabelPod merges labels and annotations into the pod name's metadata
// (the meta labels the operator syncs from PD). A failure records a
// FailedPatch event.
func (a *Applier) LabelPod(ctx context.Context, owner Owner, name string, labels, annotations map[string]string) error {
	patch := metaPatch(labels, annotations)
	_, err := a.kube.CoreV1().Pods(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return a.recordPatch(ctx, owner, "Pod", name, err)
}

// LabelPVC merges labels and annotations into the PVC name's metadata.
// A failure records a FailedPatch event.
func (a *Applier) LabelPVC(ctx context.Context, owner Owner, name string, labels, annotations map[string]string) error {
	patch := metaPatch(labels, annotations)
	_, err := a.kube.CoreV1().PersistentVolumeClaims(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return a.recordPatch(ctx, owner, "PersistentVolumeClaim", name, err)
}

// ResizePVC asks for size as the PVC name's storage request (the storage
// driver then expands the volume). A failure records a FailedPatch event.
func (a *Applier) ResizePVC(ctx context.Context, owner Owner, name string, size resource.Quantity) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"resources": map[string]any{
		"requests": map[string]string{string(corev1.ResourceStorage): size.String()}}}})
	_, err := a.kube.CoreV1().PersistentVolumeClaims(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return a.recordPatch(ctx, owner, "PersistentVolumeClaim", name, err)
}

// PatchPV sets the PV name's reclaim policy (when policy is not "") and
// merges labels and annotations into its metadata, in one write. A failure
// records a FailedPatch event. With a PV cache, a patch whose every field
// was sent less than cacheLagLimit ago, while the cache still shows the PV
// as it was then, is not sent again: under load the next sync comes before
// the watch (the reclaim step's patch after the labeller's, which carried
// the same policy and labels and the member's IDs).
func (a *Applier) PatchPV(ctx context.Context, owner Owner, name string,
	policy corev1.PersistentVolumeReclaimPolicy, labels, annotations map[string]string) error {
	body := map[string]any{}
	if meta := metaFields(labels, annotations); len(meta) > 0 {
		body["metadata"] = meta
	}
	if policy != "" {
		body["spec"] = map[string]any{"persistentVolumeReclaimPolicy": policy}
	}
	patch, _ := json.Marshal(body)
	keys := a.pvPatchKeys(name, policy, labels, annotations)
	if a.recent.allPending(keys) {
		return nil // sent and answered; the cache still shows the PV as it was then
	}
	_, err := a.kube.CoreV1().PersistentVolumes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil {
		for _, k := range keys {
			a.recent.wrote(k)
		}
	}
	return a.recordPatch(ctx, owner, "PersistentVolume", name, err)
}

// pvPatchKeys names each field a patch of the PV name sets, together with
// the version of the PV the cache shows (none: ""): the same keys again
// mean fields already sent while the cache has not moved. It returns nil
// without a PV cache.
func (a *Applier) pvPatchKeys(name string, policy corev1.PersistentVolumeReclaimPolicy, labels, annotations map[string]string) []string {
	if a.pvLister == nil {
		return nil
	}
	rv := ""
	if pv, err := a.pvLister.Get(name); err == nil {
		rv = pv.ResourceVersion
	}
	prefix := writeKey("PersistentVolume", rv, name) + "\x00"
	keys := make([]string, 0, 1+len(labels)+len(annotations))
	if policy != "" {
		keys = append(keys, prefix+"policy="+string(policy))
	}
	for k, v := range labels {
		keys = append(keys, prefix+"label:"+k+"="+v)
	}
	for k, v := range annotations {
		keys = append(keys, prefix+"annotation:"+k+"="+v)
	}
	return keys
}

func metaPatch(labels, annotations map[string]string) []byte {
	b, _ := json.Marshal(map[string]any{"metadata": metaFields(labels, annotations)})
	return b
}

// metaFields is the metadata part of a merge patch: labels and annotations
// when not empty.
func metaFields(labels, annotations map[string]string) map[string]any {
	meta := map[string]any{}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return meta
}

func (a *Applier) recordDelete(ctx context.Context, owner Owner, kind, name, reason string, err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	label := name
	if reason != "" {
		label = fmt.Sprintf("%s (%s)", name, reason)
	}
	if !apierrors.IsConflict(err) { // the object changed since it was read: not a failure
		recordEvent(ctx, a.recorder, owner, "Delete", kind, label, err)
	}
	if err != nil {
		return fmt.Errorf("delete %s %s/%s: %w", kind, owner.GetNamespace(), name, err)
	}
	return nil
}

func (a *Applier) recordPatch(ctx context.Context, owner Owner, kind, name string, err error) error {
	if err == nil {
		return nil
	}
	recordEvent(ctx, a.recorder, owner, "Patch", kind, name, err)
	return fmt.Errorf("patch %s %s/%s: %w", kind, owner.GetNamespace(), name, err)
}
