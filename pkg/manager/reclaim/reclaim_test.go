package reclaim

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

type fixture struct {
	deps    *controller.FakeDependencies
	env     *component.Env
	policy  *PolicyManager
	cleaner *Cleaner
	tc      *v1alpha1.TidbCluster
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	deps := controller.NewFakeDependencies()
	env := controller.NewEnv(deps.Dependencies)
	on := true
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{EnablePVReclaim: &on}}
	return &fixture{deps: deps, env: env, policy: NewPolicy(env), cleaner: NewCleaner(env), tc: tc}
}

// addPVC puts a bound PVC of ordinal into the API and the cache, and its PV
// into the API with policy Delete (as a StorageClass provisions it).
func (f *fixture) addPVC(t *testing.T, component string, ordinal int, annotations map[string]string) *corev1.PersistentVolumeClaim {
	t.Helper()
	name := component + "-basic-" + component + "-" + string(rune('0'+ordinal))
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-" + name), ResourceVersion: "7",
			Annotations: annotations, Labels: map[string]string{label.InstanceLabelKey: "basic", label.NameLabelKey: label.TiDBCluster,
				label.ManagedByLabelKey: label.TiDBOperator, label.ComponentLabelKey: component}},
		Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + name},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete}}
	f.create(t, pvc, pv)
	f.must(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Add(pvc))
	return pvc
}

// addStatefulSet puts the component's StatefulSet with replicas into the cache.
func (f *fixture) addStatefulSet(t *testing.T, component string, replicas int32) {
	t.Helper()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-" + component, Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas}}
	f.must(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Add(sts))
}

func (f *fixture) create(t *testing.T, objs ...runtime.Object) {
	t.Helper()
	for _, o := range objs {
		f.must(t, f.deps.FakeKube.Tracker().Add(o))
	}
}

func (f *fixture) must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) pvPolicy(t *testing.T, name string) corev1.PersistentVolumeReclaimPolicy {
	t.Helper()
	pv, err := f.deps.FakeKube.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
	f.must(t, err)
	return pv.Spec.PersistentVolumeReclaimPolicy
}

// wantWrites fails the test unless the fake API saw n writes since its
// actions were last cleared.
func (f *fixture) wantWrites(t *testing.T, n int, why string) {
	t.Helper()
	var writes []k8stesting.Action
	for _, a := range f.deps.FakeKube.Actions() {
		if v := a.GetVerb(); v == "patch" || v == "delete" || v == "create" || v == "update" {
			writes = append(writes, a)
		}
	}
	if len(writes) != n {
		t.Errorf("%s: %d writes, want %d: %v", why, len(writes), n, writes)
	}
}

func TestPolicyRetainsPVsOnceAndSkipsDeferredPVCs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addPVC(t, "pd", 0, nil)
	f.addPVC(t, "tikv", 3, map[string]string{label.AnnPVCDeferDeleting: "2026-01-01T00:00:00Z"})

	// The first sync leaves the PD PV, without its member's IDs, to the
	// meta labeller once; the second writes it.
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	if got := f.pvPolicy(t, "pv-pd-basic-pd-0"); got != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("PD PV policy %s after the first sync, want it left to the labeller once", got)
	}
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	if got := f.pvPolicy(t, "pv-pd-basic-pd-0"); got != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("PD PV policy %s, want the default Retain", got)
	}
	if got := f.pvPolicy(t, "pv-tikv-basic-tikv-3"); got != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("a defer-deleting PVC's PV was changed to %s", got)
	}
	pv, err := f.deps.FakeKube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-pd-basic-pd-0", metav1.GetOptions{})
	f.must(t, err)
	if pv.Labels[label.ManagedByLabelKey] != label.TiDBOperator || pv.Labels[label.InstanceLabelKey] != "basic" ||
		pv.Labels[NamespaceLabelKey] != "ns" || pv.Labels[label.ComponentLabelKey] != "pd" {
		t.Fatalf("the PV is not labelled for the operator's cache: %v", pv.Labels)
	}

	// The cache now holds the labelled PV: nothing more to do.
	f.must(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumes().Informer().GetIndexer().Add(pv))
	f.deps.FakeKube.ClearActions()
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	f.wantWrites(t, 0, "a converged cluster")

	// Someone sets the PV back to Delete: the next sync restores Retain.
	pv = pv.DeepCopy()
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimDelete
	pv.ResourceVersion = "2" // a new version: the cache moved since the operator's patch
	f.must(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumes().Informer().GetIndexer().Update(pv))
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	f.wantWrites(t, 1, "the policy was reverted (one PV patch)")
}

// A TidbDashboard or TidbNGMonitoring named like the cluster labels its
// PVCs with the same instance; their PVs are theirs (their own
// pvReclaimPolicy), never the cluster's.
func TestPolicyLeavesOtherKindsPVCsOfTheSameInstanceAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pvc := f.addPVC(t, "tidb-dashboard", 0, nil).DeepCopy()
	pvc.Labels[label.NameLabelKey] = "tidb-dashboard"
	f.must(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Update(pvc))
	f.deps.FakeKube.ClearActions()
	f.must(t, f.policy.Sync(context.Background(), f.tc))
	f.wantWrites(t, 0, "a TidbDashboard's PVC of the same instance")
}

func TestPolicyLeavesPVsAloneWithoutPermission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addPVC(t, "pd", 0, nil)
	policy := NewPolicy(&component.Env{PVCs: f.env.PVCs, Kube: f.env.Kube, Writer: f.env.Writer}) // no PV cache
	f.must(t, policy.Sync(context.Background(), f.tc))
	f.wantWrites(t, 0, "without --manage-persistent-volumes")
}

func TestCleanerDeletesOnlyPVCsOfRemovedMembers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	deferDel := map[string]string{label.AnnPVCDeferDeleting: "2026-01-01T00:00:00Z"}
	f.addPVC(t, "tikv", 1, deferDel) // ordinal still wanted
	f.addPVC(t, "tikv", 3, deferDel) // pod still in the API, not yet in the cache
	f.addPVC(t, "tikv", 4, deferDel) // gone: delete
	f.addPVC(t, "tikv", 5, nil)      // not marked
	f.addStatefulSet(t, "tikv", 3)
	f.create(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-3", Namespace: "ns"}})
	retained, err := f.deps.FakeKube.CoreV1().PersistentVolumes().Get(context.Background(), "pv-tikv-basic-tikv-4", metav1.GetOptions{})
	f.must(t, err)
	retained.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain // as the policy step left it
	f.must(t, f.deps.FakeKube.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, retained, ""))

	f.must(t, f.cleaner.Sync(context.Background(), f.tc))
	left, err := f.deps.FakeKube.CoreV1().PersistentVolumeClaims("ns").List(context.Background(), metav1.ListOptions{})
	f.must(t, err)
	var names []string
	for _, p := range left.Items {
		names = append(names, p.Name)
	}
	if len(names) != 3 || slices.Contains(names, "tikv-basic-tikv-4") {
		t.Fatalf("PVCs left %v, want all but tikv-basic-tikv-4", names)
	}
	if got := f.pvPolicy(t, "pv-tikv-basic-tikv-4"); got != corev1.PersistentVolumeReclaimDelete {
		t.Errorf("the removed member's PV has policy %s, want Delete", got)
	}

	// Without enablePVReclaim nothing is deleted.
	f.tc.Spec.EnablePVReclaim = nil
	f.deps.FakeKube.ClearActions()
	f.must(t, f.deps.FakeKube.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "ns", "basic-tikv-3"))
	f.must(t, f.cleaner.Sync(context.Background(), f.tc))
	f.wantWrites(t, 0, "enablePVReclaim is off")
}

func TestCleanerRetriesWhenThePVCChanged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.addPVC(t, "pd", 3, map[string]string{label.AnnPVCDeferDeleting: "2026-01-01T00:00:00Z"})
	f.addStatefulSet(t, "pd", 3)
	f.deps.FakeKube.PrependReactor("delete", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "persistentvolumeclaims"}, "pd-basic-pd-3", nil)
	})
	err := f.cleaner.Sync(context.Background(), f.tc)
	if _, waiting := flow.AsRequeue(err); !waiting {
		t.Fatalf("want a requeue after a precondition conflict, got %v", err)
	}
}
