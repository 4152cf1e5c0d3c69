package reclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Cleaner is the last step of a cluster sync: with spec.enablePVReclaim it
// deletes the PVCs a scale-in marked defer-deleting once the member is
// really gone — its ordinal beyond the StatefulSet's replicas and its pod
// absent from the cache and from the API — after setting the PV to Delete.
type Cleaner struct {
	pvcs corelisters.PersistentVolumeClaimLister
	pods corelisters.PodLister
	sts  appslisters.StatefulSetLister
	pvs  *volumes
}

// Name labels metrics and logs.
func (c *Cleaner) Name() string { return "pvc_cleaner" }

// Sync deletes every removable PVC. It does nothing for a paused cluster or
// without enablePVReclaim; it returns a RequeueError when a PVC changed
// since it was read, and an error when the API fails.
func (c *Cleaner) Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if tc.Spec.Paused || tc.Spec.EnablePVReclaim == nil || !*tc.Spec.EnablePVReclaim {
		return nil
	}
	pvcs, err := claims(c.pvcs, tc)
	if err != nil {
		return err
	}
	for _, pvc := range pvcs {
		if !deferred(pvc) {
			continue
		}
		pod, removable, err := c.memberGone(ctx, tc, pvc)
		if err != nil {
			return err
		}
		if !removable {
			continue
		}
		if err := c.remove(ctx, tc, pvc, pod); err != nil {
			return err
		}
	}
	return nil
}

// memberGone reports whether the PVC's member was scaled in for good.
func (c *Cleaner) memberGone(ctx context.Context, tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim) (string, bool, error) {
	component := pvc.Labels[label.ComponentLabelKey]
	ordinal, err := names.Ordinal(pvc.Name)
	if component == "" || err != nil {
		return "", false, nil
	}
	set, err := c.sts.StatefulSets(tc.Namespace).Get(names.Member(tc.Name, component))
	if err != nil || set.Spec.Replicas == nil || ordinal < *set.Spec.Replicas {
		return "", false, nil // the ordinal is (or may be) wanted again
	}
	pod := names.Pod(tc.Name, component, ordinal)
	if _, err := c.pods.Pods(tc.Namespace).Get(pod); err == nil {
		return pod, false, nil
	}
	// The cache may lag behind a pod just recreated: ask the API.
	_, err = c.pvs.kube.CoreV1().Pods(tc.Namespace).Get(ctx, pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return pod, true, nil
	case err != nil:
		return pod, false, fmt.Errorf("get pod %s: %w", pod, err)
	}
	return pod, false, nil
}

// remove sets the PV to Delete and deletes the PVC, provided it is still
// the one that was read.
func (c *Cleaner) remove(ctx context.Context, tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim, pod string) error {
	want := component.DesiredPV(tc, pvc, nil, "")
	want.Policy = corev1.PersistentVolumeReclaimDelete
	if err := c.pvs.ensure(ctx, tc, pvc, want); err != nil {
		return err
	}
	err := c.pvs.writer.DeletePVC(ctx, tc, pvc.Name,
		&metav1.Preconditions{UID: &pvc.UID, ResourceVersion: &pvc.ResourceVersion}, "of removed pod "+pod)
	if apierrors.IsConflict(err) {
		return flow.Requeue("PVC %s changed since it was read", pvc.Name)
	}
	return err
}
