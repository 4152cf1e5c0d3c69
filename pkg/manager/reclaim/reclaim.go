// Package reclaim looks after the PersistentVolumes behind a TidbCluster's
// data volumes. The policy step gives every PV bound to a cluster PVC the
// reclaim policy of spec.pvReclaimPolicy (Retain by default, so deleting a
// PVC never deletes the data) and labels it, so the operator's PV cache
// holds only these PVs; the cleaner step, with spec.enablePVReclaim,
// deletes the PVCs of scaled-in members once their pods are gone, after
// setting their PVs to Delete. Both leave PVs alone when the operator runs
// without --manage-persistent-volumes (the chart's namespaced mode).
package reclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// NamespaceLabelKey on a PV names the namespace of the cluster it serves.
const NamespaceLabelKey = "app.kubernetes.io/namespace"

// volumes reads PVs from the cache and patches them through the write layer.
type volumes struct {
	kube   kubernetes.Interface // reads only: pods the cache may lag behind on
	writer *apply.Applier
	lister corelisters.PersistentVolumeLister // nil: PVs are off limits
}

// ensure gives the PV bound to pvc the policy and the cluster's labels,
// unless the cache shows it has them. It does nothing without a PV cache.
func (v *volumes) ensure(ctx context.Context, tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim,
	policy corev1.PersistentVolumeReclaimPolicy) error {
	if v.lister == nil {
		return nil
	}
	want := pvLabels(tc, pvc)
	pv, err := v.lister.Get(pvc.Spec.VolumeName)
	if err == nil && pv.Spec.PersistentVolumeReclaimPolicy == policy && labels.SelectorFromSet(want).Matches(labels.Set(pv.Labels)) {
		return nil
	}
	if err := v.writer.PatchPV(ctx, tc, pvc.Spec.VolumeName, policy, want); err != nil {
		return fmt.Errorf("set reclaim policy %s on PV %s of PVC %s: %w", policy, pvc.Spec.VolumeName, pvc.Name, err)
	}
	return nil
}

// pvLabels are the labels of the PV bound to pvc: the PVC's own component
// labels plus the cluster's namespace (PVs have none).
func pvLabels(tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim) map[string]string {
	out := map[string]string{
		label.ManagedByLabelKey: label.TiDBOperator,
		label.InstanceLabelKey:  tc.Name,
		NamespaceLabelKey:       tc.Namespace,
	}
	if c := pvc.Labels[label.ComponentLabelKey]; c != "" {
		out[label.ComponentLabelKey] = c
	}
	return out
}

// claims returns the cluster's PVCs that are bound to a PV and not being
// deleted: those labelled app.kubernetes.io/name=tidb-cluster, not those of
// a TidbDashboard or TidbNGMonitoring that shares the cluster's name.
func claims(lister corelisters.PersistentVolumeClaimLister, tc *v1alpha1.TidbCluster) ([]*corev1.PersistentVolumeClaim, error) {
	sel := labels.SelectorFromSet(labels.Set{label.InstanceLabelKey: tc.Name, label.ManagedByLabelKey: label.TiDBOperator,
		label.NameLabelKey: label.TiDBCluster})
	all, err := lister.PersistentVolumeClaims(tc.Namespace).List(sel)
	if err != nil {
		return nil, fmt.Errorf("list PVCs: %w", err)
	}
	var out []*corev1.PersistentVolumeClaim
	for _, pvc := range all {
		if pvc.Status.Phase == corev1.ClaimBound && pvc.Spec.VolumeName != "" && pvc.DeletionTimestamp == nil {
			out = append(out, pvc)
		}
	}
	return out, nil
}

// deferred reports whether a scale-in marked the PVC for later deletion.
func deferred(pvc *corev1.PersistentVolumeClaim) bool {
	_, ok := pvc.Annotations[label.AnnPVCDeferDeleting]
	return ok
}
