package component

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// MetaLabelWait is how long the reclaim step leaves a new PD, TiKV or
// TiFlash PVC's PV to the meta labeller, which writes the PV once with the
// reclaim policy and the member's IDs together (one patch instead of two).
// A member that registers with PD later than this gets its PV patched by
// the reclaim step first and labelled again once its ID is known.
const MetaLabelWait = 2 * time.Minute

// metaKeys are the PVC labels the meta labeller sets and the PV repeats.
var metaKeys = []string{label.ClusterIDLabelKey, label.MemberIDLabelKey, label.StoreIDLabelKey}

// PVState is what the operator keeps on the PV behind a cluster PVC: the
// reclaim policy ("" leaves it alone), the labels its PV cache filters on
// plus the member's meta labels, and the pod-name annotation.
type PVState struct {
	Policy      corev1.PersistentVolumeReclaimPolicy
	Labels      map[string]string
	Annotations map[string]string
}

// DesiredPV is the PVState of the PV bound to pvc: spec.pvReclaimPolicy
// (Retain by default; none for a PVC marked defer-deleting, which the
// cleaner owns), the cluster's labels, and meta (cluster-id, member-id or
// store-id, pod-name) merged over what the PVC already carries; podName,
// when not "", is the pod-name annotation.
func DesiredPV(tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim, meta map[string]string, podName string) PVState {
	want := PVState{Policy: corev1.PersistentVolumeReclaimRetain, Labels: map[string]string{
		label.ManagedByLabelKey: label.TiDBOperator,
		label.InstanceLabelKey:  tc.GetName(),
		label.NamespaceLabelKey: tc.GetNamespace(),
	}}
	if tc.Spec.PVReclaimPolicy != nil {
		want.Policy = *tc.Spec.PVReclaimPolicy
	}
	if _, deferred := pvc.Annotations[label.AnnPVCDeferDeleting]; deferred {
		want.Policy = ""
	}
	if c := pvc.Labels[label.ComponentLabelKey]; c != "" {
		want.Labels[label.ComponentLabelKey] = c
	}
	for _, k := range metaKeys {
		if v := pvc.Labels[k]; v != "" {
			want.Labels[k] = v
			want.Labels[label.NameLabelKey] = label.TiDBCluster
		}
	}
	for k, v := range meta {
		want.Labels[k] = v
		want.Labels[label.NameLabelKey] = label.TiDBCluster
	}
	if podName == "" {
		podName = pvc.Annotations[label.AnnPodNameKey]
	}
	if podName != "" {
		want.Annotations = map[string]string{label.AnnPodNameKey: podName}
	}
	return want
}

// Holds reports whether pv already has everything of s.
func (s PVState) Holds(pv *corev1.PersistentVolume) bool {
	return (s.Policy == "" || pv.Spec.PersistentVolumeReclaimPolicy == s.Policy) &&
		HasAll(pv.Labels, s.Labels) && HasAll(pv.Annotations, s.Annotations)
}

// AwaitsMetaLabels reports whether the reclaim step should leave pvc's PV
// to the meta labeller for now: a PVC of a component with PD identities
// (HasPDIdentity: PD, TiKV, TiFlash) without the cluster-id label yet,
// younger than MetaLabelWait.
func AwaitsMetaLabels(pvc *corev1.PersistentVolumeClaim, now time.Time) bool {
	if !HasPDIdentity(pvc.Labels[label.ComponentLabelKey]) {
		return false
	}
	return pvc.Labels[label.ClusterIDLabelKey] == "" && now.Sub(pvc.CreationTimestamp.Time) < MetaLabelWait
}

// HasPDIdentity reports whether the component named by an
// app.kubernetes.io/component value gets member or store IDs from PD (its
// descriptor's Kind: PD, TiKV, TiFlash), which the meta labeller copies onto
// its pods, PVCs and PVs.
func HasPDIdentity(componentLabel string) bool {
	d := components.Lookup(componentLabel)
	return d != nil && d.Kind.HasPDIdentity()
}

// HasAll reports whether have holds every key of want with its value (a
// nil or empty want is always held).
func HasAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
