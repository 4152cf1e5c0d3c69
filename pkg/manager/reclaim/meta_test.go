package reclaim

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// setPVC replaces pvc in the cache after mutate.
func (f *fixture) setPVC(t *testing.T, pvc *corev1.PersistentVolumeClaim, mutate func(*corev1.PersistentVolumeClaim)) {
	t.Helper()
	pvc = pvc.DeepCopy()
	mutate(pvc)
	f.must(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Update(pvc))
}

// A new PD or TiKV PVC's PV is left to the meta labeller, which writes it
// once with the member's IDs; a TiDB or Pump PVC, an old PVC and a PVC that
// already carries the meta labels are written at once — the last with its
// meta labels, so the labeller has nothing left to write.
func TestPolicyLeavesANewMembersPVToTheMetaLabeller(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	now := metav1.NewTime(f.deps.FakeClock.Now())
	pd := f.addPVC(t, "pd", 0, nil)
	f.setPVC(t, pd, func(p *corev1.PersistentVolumeClaim) { p.CreationTimestamp = now })
	pump := f.addPVC(t, "pump", 0, nil)
	f.setPVC(t, pump, func(p *corev1.PersistentVolumeClaim) { p.CreationTimestamp = now })

	f.deps.FakeKube.ClearActions()
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	f.wantWrites(t, 1, "a new Pump PVC's PV is written, a new PD PVC's PV is left to the meta labeller")
	if got := f.pvPolicy(t, "pv-pd-basic-pd-0"); got != corev1.PersistentVolumeReclaimDelete {
		t.Fatalf("the new PD PVC's PV was written (policy %s) before its member's IDs were known", got)
	}

	// The labeller labelled the PVC: the PV is written once, with its IDs.
	f.setPVC(t, pd, func(p *corev1.PersistentVolumeClaim) {
		p.CreationTimestamp = now
		p.Labels[label.ClusterIDLabelKey] = "42"
		p.Labels[label.MemberIDLabelKey] = "7"
		p.Annotations = map[string]string{label.AnnPodNameKey: "basic-pd-0"}
	})
	f.deps.FakeKube.ClearActions()
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	f.wantWrites(t, 1, "the PD PV (with its IDs); not the Pump PV again, whose patch the cache has not shown yet")
	pv, err := f.deps.FakeKube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-pd-basic-pd-0", metav1.GetOptions{})
	f.must(t, err)
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Labels[label.MemberIDLabelKey] != "7" ||
		pv.Labels[label.ClusterIDLabelKey] != "42" || pv.Annotations[label.AnnPodNameKey] != "basic-pd-0" {
		t.Errorf("PV = policy %s labels %v annotations %v, want Retain with cluster-id, member-id and pod-name",
			pv.Spec.PersistentVolumeReclaimPolicy, pv.Labels, pv.Annotations)
	}
	if !component.DesiredPV(f.tc, pd, map[string]string{label.ClusterIDLabelKey: "42", label.MemberIDLabelKey: "7"},
		"basic-pd-0").Holds(pv) {
		t.Error("the meta labeller would write the PV again: it and the reclaim step disagree")
	}

	// An unlabelled TiKV PVC older than the wait is left to the labeller
	// once (it labels the member later in the same sync when PD names it),
	// not longer.
	tikv := f.addPVC(t, "tikv", 0, nil)
	f.setPVC(t, tikv, func(p *corev1.PersistentVolumeClaim) {
		p.CreationTimestamp = metav1.NewTime(now.Add(-component.MetaLabelWait - time.Second))
	})
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	if got := f.pvPolicy(t, "pv-tikv-basic-tikv-0"); got != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("a TiKV PVC older than %v without IDs, first sync: PV policy %s, want it left once", component.MetaLabelWait, got)
	}
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	if got := f.pvPolicy(t, "pv-tikv-basic-tikv-0"); got != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("a TiKV PVC older than %v without IDs: PV policy %s, want Retain", component.MetaLabelWait, got)
	}
}
