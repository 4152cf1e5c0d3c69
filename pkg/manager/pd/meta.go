package pd

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// Meta gives the pods of PD, TiKV and TiFlash, their PVCs and the PVs
// behind them the meta labels the TiDB Operator syncs from PD (spec §3,
// MetaManager): tidb.pingcap.com/cluster-id, and member-id (PD) or
// store-id (TiKV, TiFlash); PVCs and PVs also name their pod
// (tidb.pingcap.com/pod-name). Everything is read from the caches and
// patched through the write layer only where it is missing or different,
// so a converged cluster costs no write.
type Meta struct {
	writer *apply.Applier
	pods   corelisters.PodLister
	pvcs   corelisters.PersistentVolumeClaimLister
	pvs    corelisters.PersistentVolumeLister // nil: PVs are off limits
}

// NewMeta returns the meta labeler over env's caches and write layer.
func NewMeta(env *component.Env) *Meta {
	return &Meta{writer: env.Writer, pods: env.Pods, pvcs: env.PVCs, pvs: env.PVs}
}

// SyncMembers labels PD's pods with member-id: ids maps a pod name to its
// member ID. See SyncPods.
func (m *Meta) SyncMembers(ctx context.Context, tc *v1alpha1.TidbCluster, ids map[string]string) error {
	return m.SyncPods(ctx, tc, label.MemberIDLabelKey, ids)
}

// SyncStores labels TiKV's or TiFlash's pods with store-id: ids maps a pod
// name to its store ID. See SyncPods.
func (m *Meta) SyncStores(ctx context.Context, tc *v1alpha1.TidbCluster, ids map[string]string) error {
	return m.SyncPods(ctx, tc, label.StoreIDLabelKey, ids)
}

// SyncPods gives each pod in ids (pod name → value of idKey), its PVCs and
// their PVs the cluster ID and idKey. It does nothing before PD told the
// cluster ID, skips pods, PVCs and PVs not in the caches and pods not
// scheduled or being deleted (a later sync labels them), and returns the failed patches joined (each also recorded
// as a FailedPatch event); one failure does not stop the others.
func (m *Meta) SyncPods(ctx context.Context, tc *v1alpha1.TidbCluster, idKey string, ids map[string]string) error {
	if m == nil || m.writer == nil || m.pods == nil || tc.Status.ClusterID == "" {
		return nil
	}
	var errs []error
	for podName, id := range ids {
		if id == "" {
			continue
		}
		want := map[string]string{label.ClusterIDLabelKey: tc.Status.ClusterID, idKey: id}
		errs = append(errs, m.syncPod(ctx, tc, podName, want))
	}
	return errors.Join(errs...)
}

func (m *Meta) syncPod(ctx context.Context, tc *v1alpha1.TidbCluster, podName string, want map[string]string) error {
	pod, err := m.pods.Pods(tc.Namespace).Get(podName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", podName, err)
	}
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
		return nil // not scheduled yet (or an orphan the cleaner may delete), or going: labelled once it runs
	}
	var errs []error
	if !component.HasAll(pod.Labels, want) {
		errs = append(errs, m.writer.LabelPod(ctx, tc, podName, want, nil))
	}
	if m.pvcs == nil {
		return errors.Join(errs...)
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			errs = append(errs, m.syncPVC(ctx, tc, pod, v.PersistentVolumeClaim.ClaimName, want))
		}
	}
	return errors.Join(errs...)
}

func (m *Meta) syncPVC(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod, name string, podLabels map[string]string) error {
	pvc, err := m.pvcs.PersistentVolumeClaims(tc.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PVC %s: %w", name, err)
	}
	if pvc.DeletionTimestamp != nil {
		return nil
	}
	want := withKey(podLabels, label.AnnPodNameKey, pod.Name)
	ann := map[string]string{label.AnnPodNameKey: pod.Name}
	var errs []error
	if !component.HasAll(pvc.Labels, want) || !component.HasAll(pvc.Annotations, ann) {
		errs = append(errs, m.writer.LabelPVC(ctx, tc, name, want, ann))
	}
	if m.pvs != nil && pvc.Spec.VolumeName != "" {
		errs = append(errs, m.syncPV(ctx, tc, pvc, pod.Name, podLabels))
	}
	return errors.Join(errs...)
}

// syncPV gives the PV bound to pvc its meta labels together with what the
// reclaim step would write (policy, the cache's labels): the reclaim step
// leaves a new member's PV to this one write (component.AwaitsMetaLabels).
// A PV not in the cache yet is one nobody labelled: it is patched too.
func (m *Meta) syncPV(ctx context.Context, tc *v1alpha1.TidbCluster, pvc *corev1.PersistentVolumeClaim, podName string,
	podLabels map[string]string) error {
	want := component.DesiredPV(tc, pvc, podLabels, podName)
	pv, err := m.pvs.Get(pvc.Spec.VolumeName)
	switch {
	case err == nil && want.Holds(pv):
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("get PV %s: %w", pvc.Spec.VolumeName, err)
	}
	return m.writer.PatchPV(ctx, tc, pvc.Spec.VolumeName, want.Policy, want.Labels, want.Annotations)
}

func withKey(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for mk, mv := range m {
		out[mk] = mv
	}
	out[k] = v
	return out
}
