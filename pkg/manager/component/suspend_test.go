package component_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
)

func suspendedTC() *v1alpha1.TidbCluster {
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.Spec.SuspendAction = &v1alpha1.SuspendAction{SuspendStatefulSet: true}
	return tc
}

// TestSuspendDeletesTheStatefulSetKeepsPVCsAndResumes: a suspended PD has
// its StatefulSet deleted in the foreground (nothing else written, no PVC
// touched) and reports phase Suspend; while suspended nothing is created;
// without the action the StatefulSet comes back.
func TestSuspendDeletesTheStatefulSetKeepsPVCsAndResumes(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	f.deps.FakeKube.ClearActions()

	tc := suspendedTC()
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatalf("suspend: %v", err)
	}
	w := workloadWrites(f.deps)
	if len(w) != 1 || w[0].GetVerb() != "delete" || w[0].GetResource().Resource != "statefulsets" {
		t.Fatalf("writes %v, want only the StatefulSet's delete", w)
	}
	if p := w[0].(k8stesting.DeleteAction).GetDeleteOptions().PropagationPolicy; p == nil || *p != metav1.DeletePropagationForeground {
		t.Errorf("propagation %v, want Foreground (pods first)", p)
	}
	if tc.Status.PD.Phase != v1alpha1.SuspendPhase {
		t.Errorf("phase %q, want Suspend", tc.Status.PD.Phase)
	}

	// Gone from the cache: still suspended, nothing created.
	mustAdd(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Delete(
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd", Namespace: "ns"}}))
	f.deps.FakeKube.ClearActions()
	tc = suspendedTC()
	if err := f.mgr.Sync(context.Background(), tc); err != nil || len(workloadWrites(f.deps)) != 0 || tc.Status.PD.Phase != v1alpha1.SuspendPhase {
		t.Fatalf("suspended sync: err %v, writes %v, phase %q; want nothing written and Suspend", err, workloadWrites(f.deps), tc.Status.PD.Phase)
	}

	tc = newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	_ = f.mgr.Sync(context.Background(), tc)
	created := false
	for _, a := range writes(f.deps) {
		created = created || a.GetVerb() == "create" && a.GetResource().Resource == "statefulsets"
	}
	if !created || tc.Status.PD.Phase == v1alpha1.SuspendPhase {
		t.Errorf("resume: StatefulSet created %v, phase %q", created, tc.Status.PD.Phase)
	}
}

// TestSuspendWaitsForDependents: PD is suspended only once the components
// that depend on it (registered after it: TiKV) have no StatefulSet left.
func TestSuspendWaitsForDependents(t *testing.T) {
	t.Parallel()
	f := newFixture()
	component.NewManager(tikv.New(f.env), f.env) // registers TiKV after PD
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	tikvSTS := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns"}}
	indexer := f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer()
	mustAdd(t, indexer.Add(tikvSTS))
	f.deps.FakeKube.ClearActions()

	tc := suspendedTC()
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{Replicas: 1, ResourceRequirements: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}
	_ = f.mgr.Sync(context.Background(), tc.DeepCopy())
	for _, a := range writes(f.deps) {
		if a.GetVerb() == "delete" {
			t.Fatalf("PD suspended while TiKV's StatefulSet exists: %v", a)
		}
	}
	mustAdd(t, indexer.Delete(tikvSTS))
	_ = f.mgr.Sync(context.Background(), tc.DeepCopy())
	deleted := false
	for _, a := range writes(f.deps) {
		deleted = deleted || a.GetVerb() == "delete" && a.GetResource().Resource == "statefulsets"
	}
	if !deleted {
		t.Fatal("PD was not suspended once TiKV's StatefulSet was gone")
	}
}

// workloadWrites are the writes of StatefulSets, Services, ConfigMaps and
// PVCs (label bookkeeping on pods aside).
func workloadWrites(deps *controller.FakeDependencies) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range writes(deps) {
		switch a.GetResource().Resource {
		case "statefulsets", "services", "configmaps", "persistentvolumeclaims":
			out = append(out, a)
		}
	}
	return out
}
