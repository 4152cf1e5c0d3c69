package simulator

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// resizer plays the CSI external-resizer (expansion, and modification to a
// VolumeAttributesClass: modifier.go) and the kubelet's online file
// system expansion for the simulated clusters' PVCs, which KWOK provisions
// but never expands: a Bound PVC whose request grew past its capacity, in a
// StorageClass that allows expansion, gets a PersistentVolume of the new
// size and then the new status.capacity. A StorageClass without expansion
// leaves the PVC as it is (the API server itself refuses such a growth).
type resizer struct {
	kube  kubernetes.Interface
	pvcs  corelisters.PersistentVolumeClaimLister
	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
	log   klog.Logger
}

func newResizer(kube kubernetes.Interface, informer cache.SharedIndexInformer, log klog.Logger) *resizer {
	r := &resizer{kube: kube, pvcs: corelisters.NewPersistentVolumeClaimLister(informer.GetIndexer()), log: log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "tidb-simulator-resizer"})}
	enqueue := func(obj any) {
		if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok && (needsExpansion(pvc) || needsModify(pvc)) {
			r.queue.Add(types.NamespacedName{Namespace: pvc.Namespace, Name: pvc.Name})
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	return r
}

// needsExpansion reports whether pvc is Bound and asks for more than it has.
func needsExpansion(pvc *corev1.PersistentVolumeClaim) bool {
	want, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	have, bound := pvc.Status.Capacity[corev1.ResourceStorage]
	return ok && bound && pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName != "" && want.Cmp(have) > 0
}

// run expands queued PVCs until ctx ends.
func (r *resizer) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for {
		key, quit := r.queue.Get()
		if quit {
			return
		}
		if err := r.expandAndModify(ctx, key); err != nil {
			r.log.Info("could not expand PVC; retrying", "pvc", key, "err", err)
			r.queue.AddRateLimited(key)
		} else {
			r.queue.Forget(key)
		}
		r.queue.Done(key)
	}
}

// expandAndModify plays both of the external-resizer's jobs for the PVC key.
func (r *resizer) expandAndModify(ctx context.Context, key types.NamespacedName) error {
	if err := r.expand(ctx, key); err != nil {
		return err
	}
	return r.modify(ctx, key)
}

// expand grows the PV behind the PVC key and then the PVC's capacity.
func (r *resizer) expand(ctx context.Context, key types.NamespacedName) error {
	pvc, err := r.pvcs.PersistentVolumeClaims(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || !needsExpansion(pvc) {
		return err
	}
	if pvc.Spec.StorageClassName == nil {
		return nil
	}
	sc, err := r.kube.StorageV1().StorageClasses().Get(ctx, *pvc.Spec.StorageClassName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get StorageClass: %w", err)
	}
	if sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion {
		return nil
	}
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv, err := r.kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get PersistentVolume: %w", err)
	}
	if have := pv.Spec.Capacity[corev1.ResourceStorage]; have.Cmp(want) < 0 {
		pv = pv.DeepCopy()
		if pv.Spec.Capacity == nil {
			pv.Spec.Capacity = corev1.ResourceList{}
		}
		pv.Spec.Capacity[corev1.ResourceStorage] = want
		if _, err := r.kube.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("expand PersistentVolume %s: %w", pv.Name, err)
		}
	}
	pvc = pvc.DeepCopy()
	pvc.Status.Capacity[corev1.ResourceStorage] = want
	if _, err := r.kube.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("expand PVC: %w", err)
	}
	r.log.Info("PVC expanded", "pvc", key, "size", want.String(), "pv", pv.Name)
	return nil
}
