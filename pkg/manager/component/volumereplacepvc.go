package component

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// ReasonReplaceVolumeRequested (Normal event): with spec.enablePVCReplace the
// operator annotated a pod with tidb.pingcap.com/replace-volume because its
// PVCs cannot be changed in place (a smaller size, another StorageClass).
const ReasonReplaceVolumeRequested = "ReplaceVolumeRequested"

// PVCReplaceEnabled reports spec.enablePVCReplace: a volume change that
// cannot be made in place is carried out by replacing members' volumes.
func PVCReplaceEnabled(tc *v1alpha1.TidbCluster) bool {
	return tc.Spec.EnablePVCReplace != nil && *tc.Spec.EnablePVCReplace
}

// needsReplace reports whether a PVC cannot reach its template in place:
// it is larger than asked (Kubernetes never shrinks a PVC) or in another
// StorageClass than the template names (a PVC's class is immutable).
func (c liveClaim) needsReplace() bool {
	return c.shrink() || c.classChanged()
}

// classChanged reports a template that names a StorageClass other than
// the PVC's (an unset class in the template asks for nothing).
func (c liveClaim) classChanged() bool {
	return c.wantSC != "" && storageClass(c.pvc) != c.wantSC
}

// requestPVCReplace, with spec.enablePVCReplace, asks for the replacement
// of the lowest member whose PVCs cannot reach their templates in place,
// by annotating its pod as a user would; the request is then carried out
// like any other, one member at a time. A StatefulSet whose claim
// templates still ask for the old size or class is first deleted with its
// pods orphaned (once at rest) and created again by the next sync, so that
// the pods it creates again get the new volumes. Nothing happens while the
// component scales or rolls out.
func (m *Manager[O]) requestPVCReplace(ctx context.Context, st *syncState[O], pods map[int32]*corev1.Pod) error {
	if !m.owner.PVCReplace(st.tc) || st.desired == nil || m.comp.Status(st.tc).Phase != v1alpha1.NormalPhase {
		return nil
	}
	next := int32(-1)
	for _, c := range m.claims(st) {
		if c.needsReplace() {
			next = c.ordinal
			break
		}
	}
	if next < 0 {
		return nil
	}
	if drifted := replaceDrift(st.desired.Spec.VolumeClaimTemplates, st.live.Spec.VolumeClaimTemplates); len(drifted) > 0 {
		return m.recreateForReplace(ctx, st, drifted)
	}
	pod, ok := pods[next]
	if !ok {
		return nil // the planner brings the pod back first
	}
	if err := m.writer.AnnotatePod(ctx, st.tc, pod.Name, map[string]string{label.AnnReplaceVolume: label.ReplaceVolumeTrue}); err != nil {
		return fmt.Errorf("ask for the volume replacement of %s: %w", pod.Name, err)
	}
	m.eventf(st.tc, corev1.EventTypeNormal, ReasonReplaceVolumeRequested,
		"the PVCs of %s cannot reach their new size or StorageClass in place (spec.enablePVCReplace): replacing its volumes", pod.Name)
	flow.RevisitAfter(ctx, replaceRecheck, "asked for the volume replacement of %s", pod.Name)
	return nil
}

// replaceDrift names the claim templates whose size or StorageClass the
// desired StatefulSet asks to lower or change from the live one's.
func replaceDrift(desired, live []corev1.PersistentVolumeClaim) []string {
	byName := make(map[string]corev1.PersistentVolumeClaim, len(live))
	for _, t := range live {
		byName[t.Name] = t
	}
	var out []string
	for _, t := range desired {
		l, ok := byName[t.Name]
		if !ok {
			continue
		}
		want, got := t.Spec.Resources.Requests[corev1.ResourceStorage], l.Spec.Resources.Requests[corev1.ResourceStorage]
		wantSC, gotSC := deref(t.Spec.StorageClassName), deref(l.Spec.StorageClassName)
		if want.Cmp(got) < 0 || (wantSC != "" && wantSC != gotSC) {
			out = append(out, t.Name)
		}
	}
	return out
}

// recreateForReplace deletes, pods orphaned, the StatefulSet at rest whose
// claim templates drifted, so that the next sync creates it with the new
// templates before any member is replaced.
func (m *Manager[O]) recreateForReplace(ctx context.Context, st *syncState[O], drifted []string) error {
	if !atRest(st.live, *st.live.Spec.Replicas) {
		flow.RevisitAfter(ctx, replaceRecheck, "%s: waiting for StatefulSet %s to be at rest before it is created again", m.comp.Name(), st.live.Name)
		return nil
	}
	return m.recreateStatefulSet(ctx, st,
		"its volume claim templates ("+strings.Join(drifted, ", ")+") ask for a smaller size or another StorageClass",
		"then members' volumes are replaced")
}
