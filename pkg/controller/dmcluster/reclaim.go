package dmcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// dmClusterName is the app.kubernetes.io/name value of every DM child.
const dmClusterName = "dm-cluster"

// Reclaim is the step that gives the PersistentVolume of every bound PVC of
// a DM cluster spec.pvReclaimPolicy (Retain by default) and the operator's
// labels, as v1.6's reclaim policy manager does. A PV already so is not
// written; without PV and PVC caches (a namespaced operator) it does nothing.
type Reclaim struct {
	Writer *apply.Applier
	PVCs   corelisters.PersistentVolumeClaimLister
	PVs    corelisters.PersistentVolumeLister
}

// Name labels the step in logs.
func (r *Reclaim) Name() string { return "pv_reclaim_policy" }

// Sync patches the PVs of dc's PVCs whose policy or labels differ; it
// returns the first failed patch, retried with the sync.
func (r *Reclaim) Sync(ctx context.Context, dc *v1alpha1.DMCluster) error {
	if r.PVs == nil || r.PVCs == nil {
		return nil
	}
	policy := corev1.PersistentVolumeReclaimRetain
	if p := dc.Spec.PVReclaimPolicy; p != nil && *p != "" {
		policy = *p
	}
	sel := labels.SelectorFromSet(labels.Set{label.NameLabelKey: dmClusterName, label.ManagedByLabelKey: label.TiDBOperator,
		label.InstanceLabelKey: dc.Name})
	pvcs, err := r.PVCs.PersistentVolumeClaims(dc.Namespace).List(sel)
	if err != nil {
		return fmt.Errorf("list PVCs of DMCluster %s: %w", dc.Name, err)
	}
	for _, pvc := range pvcs {
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" || pvc.DeletionTimestamp != nil {
			continue
		}
		want := map[string]string{label.ManagedByLabelKey: label.TiDBOperator, label.InstanceLabelKey: dc.Name,
			label.ComponentLabelKey: pvc.Labels[label.ComponentLabelKey], label.NamespaceLabelKey: dc.Namespace}
		pv, err := r.PVs.Get(pvc.Spec.VolumeName)
		if err == nil && pv.Spec.PersistentVolumeReclaimPolicy == policy && labels.SelectorFromSet(want).Matches(labels.Set(pv.Labels)) {
			continue
		}
		if err := r.Writer.PatchPV(ctx, dc, pvc.Spec.VolumeName, policy, want, nil); err != nil {
			return fmt.Errorf("set reclaim policy %s on PV %s of PVC %s: %w", policy, pvc.Spec.VolumeName, pvc.Name, err)
		}
	}
	return nil
}
