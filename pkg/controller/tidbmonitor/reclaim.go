package tidbmonitor

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/monitor"
)

// reclaim gives the PV of every bound data PVC of tm spec.pvReclaimPolicy
// (Retain when unset) and the operator's labels, and returns the name of
// the first such PV (status.deploymentStorageStatus). A PV already so is not
// written; without PV and PVC caches (a namespaced operator) nothing is done.
func (c *Control) reclaim(ctx context.Context, tm *v1alpha1.TidbMonitor) (string, error) {
	if c.pvs == nil || c.pvcs == nil || !tm.Spec.Persistent {
		return "", nil
	}
	policy := corev1.PersistentVolumeReclaimRetain
	if p := tm.Spec.PVReclaimPolicy; p != nil && *p != "" {
		policy = *p
	}
	pvcs, err := c.pvcs.PersistentVolumeClaims(tm.Namespace).List(labels.SelectorFromSet(monitor.Labels(tm)))
	if err != nil {
		return "", fmt.Errorf("list PVCs of TidbMonitor %s/%s: %w", tm.Namespace, tm.Name, err)
	}
	first := ""
	for _, pvc := range pvcs {
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" || pvc.DeletionTimestamp != nil {
			continue
		}
		if first == "" || pvc.Spec.VolumeName < first {
			first = pvc.Spec.VolumeName
		}
		want := map[string]string{
			label.ManagedByLabelKey: label.TiDBOperator,
			label.InstanceLabelKey:  tm.Name,
			label.ComponentLabelKey: monitor.ComponentLabelVal,
			label.NamespaceLabelKey: tm.Namespace,
		}
		pv, err := c.pvs.Get(pvc.Spec.VolumeName)
		if err == nil && pv.Spec.PersistentVolumeReclaimPolicy == policy && labels.SelectorFromSet(want).Matches(labels.Set(pv.Labels)) {
			continue
		}
		if err := c.applier.PatchPV(ctx, tm, pvc.Spec.VolumeName, policy, want, nil); err != nil {
			return "", fmt.Errorf("set reclaim policy %s on PV %s of PVC %s: %w", policy, pvc.Spec.VolumeName, pvc.Name, err)
		}
	}
	return first, nil
}
