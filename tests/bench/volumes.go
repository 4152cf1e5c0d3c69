//go:build bench

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// kwokStorageClass is the control plane's default StorageClass, whose
// claims KWOK provisions and binds.
const kwokStorageClass = "kwok-volume"

// VolumeBinder provisions and binds the claims of the KWOK StorageClass
// the way KWOK's pvc-provision and pv-bind stages do (the same PV name,
// fields and annotations, so that whichever of the two comes second
// changes nothing), but with several workers: KWOK plays the stages of a
// kind one object at a time, about one claim a second on a loaded 2-core
// machine, which made volumes, not the operator, what 1000 clusters waited
// for. It is the harness's part of the control plane: its requests are not
// the operator's and are not counted.
type VolumeBinder struct {
	kube  kubernetes.Interface
	pvcs  cache.Indexer
	queue workqueue.TypedRateLimitingInterface[string]
	wg    sync.WaitGroup
}

// NewVolumeBinder registers on a PVC informer; Run starts the workers.
func NewVolumeBinder(kube kubernetes.Interface, inf cache.SharedIndexInformer) (*VolumeBinder, error) {
	b := &VolumeBinder{kube: kube, pvcs: inf.GetIndexer(),
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	enqueue := func(obj any) {
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok && needsBinding(pvc) {
			b.queue.Add(pvc.Namespace + "/" + pvc.Name)
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }})
	return b, err
}

func needsBinding(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == kwokStorageClass &&
		pvc.DeletionTimestamp == nil && pvc.Spec.VolumeName == "" && pvc.Status.Phase != corev1.ClaimBound
}

// Run starts workers that bind claims until ctx is done; Wait returns
// once they stopped.
func (b *VolumeBinder) Run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		b.queue.ShutDown()
	}()
	for range workers {
		b.wg.Go(func() {
			for {
				key, quit := b.queue.Get()
				if quit {
					return
				}
				if err := b.bind(ctx, key); err != nil && ctx.Err() == nil {
					logf("volume binder: %s: %v", key, err)
					b.queue.AddRateLimited(key)
				} else {
					b.queue.Forget(key)
				}
				b.queue.Done(key)
			}
		})
	}
}

// Wait returns once the workers stopped.
func (b *VolumeBinder) Wait() { b.wg.Wait() }

// bind creates the claim's PV, binds the claim to it and marks both Bound.
func (b *VolumeBinder) bind(ctx context.Context, key string) error {
	obj, ok, err := b.pvcs.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if !needsBinding(pvc) {
		return nil
	}
	pv := kwokVolume(pvc)
	if _, err := b.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create PV: %w", err)
	}
	claims := b.kube.CoreV1().PersistentVolumeClaims(pvc.Namespace)
	ann := map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
		"volume.beta.kubernetes.io/storage-provisioner": "kwok.x-k8s.io/volume", "volume.kubernetes.io/storage-provisioner": "kwok.x-k8s.io/volume"}
	bind := jsonBytes(map[string]any{"metadata": map[string]any{"annotations": ann}, "spec": map[string]any{"volumeName": pv.Name}})
	if _, err := claims.Patch(ctx, pvc.Name, types.MergePatchType, bind, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("bind PVC: %w", err)
	}
	bound := jsonBytes(map[string]any{"status": map[string]any{"phase": corev1.ClaimBound,
		"accessModes": pvc.Spec.AccessModes, "capacity": pvc.Spec.Resources.Requests}})
	if _, err := claims.Patch(ctx, pvc.Name, types.MergePatchType, bound, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("PVC status: %w", err)
	}
	pvBound := jsonBytes(map[string]any{"status": map[string]any{"phase": corev1.VolumeBound, "lastPhaseTransitionTime": metav1.Now()}})
	if _, err := b.kube.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, pvBound, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("PV status: %w", err)
	}
	return nil
}

// jsonBytes marshals a patch built of maps, strings and API types, which
// always marshals.
func jsonBytes(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// kwokVolume is the PV KWOK's pvc-provision stage creates for pvc.
func kwokVolume(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	mode := corev1.PersistentVolumeFilesystem
	if pvc.Spec.VolumeMode != nil {
		mode = *pvc.Spec.VolumeMode
	}
	hostPath := corev1.HostPathDirectoryOrCreate
	name := "pvc-" + string(pvc.UID)
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "kwok.x-k8s.io/volume"}},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:                   pvc.Spec.AccessModes,
			Capacity:                      pvc.Spec.Resources.Requests,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              kwokStorageClass,
			VolumeMode:                    &mode,
			ClaimRef: &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Name: pvc.Name,
				Namespace: pvc.Namespace, ResourceVersion: pvc.ResourceVersion, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: "/tmp/kwok-local-path-provisioner/" + name, Type: &hostPath}},
		},
	}
}
