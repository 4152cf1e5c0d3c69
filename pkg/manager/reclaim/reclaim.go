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
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// NamespaceLabelKey on a PV names the namespace of the cluster it serves.
const NamespaceLabelKey = label.NamespaceLabelKey

// volumes reads PVs from the cache and patches them through the write layer.
type volumes struct {
	kube   kubernetes.Interface // reads only: pods the cache may lag behind on
	writer *apply.Applier
	lister corelisters.PersistentVolumeLister // nil: PVs are off limits
}

// ensure gives the PV bound to pvc what component.DesiredPV says (the
// reclaim policy, the labels the PV cache filters on and the meta labels
// the PVC already carries), unless the cache shows it has them. It does
// nothing without a PV cache.
func (v *volumes) ensure(ctx context.Context, tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim,
	want component.PVState) error {
	if v.holds(pvc, want) {
		return nil
	}
	return v.write(ctx, tc, pvc, want)
}

// write patches pvc's PV with want.
func (v *volumes) write(ctx context.Context, tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim,
	want component.PVState) error {
	if err := v.writer.PatchPV(ctx, tc, pvc.Spec.VolumeName, want.Policy, want.Labels, want.Annotations); err != nil {
		return fmt.Errorf("set reclaim policy %s on PV %s of PVC %s: %w", want.Policy, pvc.Spec.VolumeName, pvc.Name, err)
	}
	return nil
}

// holds reports whether the cache shows pvc's PV with everything of want,
// or there is no PV cache (PVs are off limits).
func (v *volumes) holds(pvc *corev1.PersistentVolumeClaim, want component.PVState) bool {
	if v.lister == nil {
		return true
	}
	pv, err := v.lister.Get(pvc.Spec.VolumeName)
	return err == nil && want.Holds(pv)
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
