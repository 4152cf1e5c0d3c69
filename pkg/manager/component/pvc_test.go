package component_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// TestRestartRefusedWhileDataPVCIsDeleted rolls PD with the data PVC of the
// pod next in line held Terminating by pvc-protection: the pod must not be
// restarted (that would let the PVC and its data go), a Warning event says
// why, and the wait reason names the PVC.
func TestRestartRefusedWhileDataPVCIsDeleted(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.Spec.PD.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}})
	if err := f.mgr.Sync(context.Background(), tc.DeepCopy()); err != nil {
		t.Fatalf("sync applying the new template: %v", err)
	}
	f.seed(t)
	sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
	if err != nil {
		t.Fatal(err)
	}
	sts = sts.DeepCopy()
	sts.Status.UpdateRevision = "r2" // the pods run r1: a rollout is due
	mustAdd(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	now := metav1.Now()
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(&corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "pd-basic-pd-2", Namespace: "ns", DeletionTimestamp: &now,
			Finalizers: []string{"kubernetes.io/pvc-protection"}}}))
	f.deps.FakeKube.ClearActions()

	err = f.mgr.Sync(context.Background(), tc.DeepCopy())
	re, waiting := flow.AsRequeue(err)
	if !waiting || !strings.Contains(re.Reason, "pd-basic-pd-2 is being deleted") {
		t.Fatalf("want a wait naming the PVC, got %v", err)
	}
	if w := writes(f.deps); len(w) != 0 {
		t.Fatalf("nothing may be written while the restart is refused, got %v", w)
	}
	found := false
	for len(f.deps.FakeRecorder.Events) > 0 {
		ev := <-f.deps.FakeRecorder.Events
		found = found || strings.HasPrefix(ev, "Warning DataVolumeDeleting") && strings.Contains(ev, "basic-pd-2")
	}
	if !found {
		t.Fatal("no DataVolumeDeleting event naming basic-pd-2")
	}
}

// TestDeletingDataVolumeIsAComponentCondition: while a wanted member's PVC
// is Terminating the component says so (the cluster is then not Ready), and
// the condition goes with the PVC.
func TestDeletingDataVolumeIsAComponentCondition(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	now := metav1.Now()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pd-basic-pd-1", Namespace: "ns",
		DeletionTimestamp: &now, Finalizers: []string{"kubernetes.io/pvc-protection"}}}
	indexer := f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer()
	mustAdd(t, indexer.Add(pvc))
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	_ = f.mgr.Sync(context.Background(), tc)
	c := meta.FindStatusCondition(tc.Status.PD.Conditions, v1alpha1.ComponentDataVolumeDeleting)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "pd-basic-pd-1") {
		t.Fatalf("conditions %+v, want DataVolumeDeleting naming pd-basic-pd-1", tc.Status.PD.Conditions)
	}
	mustAdd(t, indexer.Delete(pvc))
	_ = f.mgr.Sync(context.Background(), tc)
	if c := meta.FindStatusCondition(tc.Status.PD.Conditions, v1alpha1.ComponentDataVolumeDeleting); c != nil {
		t.Fatalf("the condition must go with the PVC: %+v", c)
	}
}
