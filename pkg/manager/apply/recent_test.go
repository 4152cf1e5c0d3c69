package apply

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// TestACreateTheCacheHasNotShownIsNotRepeated: a sync right after the one
// that created a StatefulSet, its cache still behind, waits instead of
// creating it again (a 409 and a read); once the cache shows it the
// Applier forgets the create; after the operator deletes it, or after
// cacheLagLimit without the cache showing it, it is created again.
func TestACreateTheCacheHasNotShownIsNotRepeated(t *testing.T) {
	t.Parallel()
	a, kube, informers := newFakeApplier()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a.recent.now = func() time.Time { return now }
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	desired := func() *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns"}}
	}
	ctx := context.Background()
	creates := func() int { return countActions(kube, "create", "statefulsets") }
	created, err := a.StatefulSet(ctx, owner, desired())
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(50 * time.Millisecond)
	_, err = a.StatefulSet(ctx, owner, desired())
	if _, waiting := flow.AsRequeue(err); !waiting || creates() != 1 {
		t.Fatalf("apply while the cache lags: err %v, %d creates; want a wait and 1 create", err, creates())
	}

	indexer := informers.Apps().V1().StatefulSets().Informer().GetIndexer()
	if err := indexer.Add(created); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StatefulSet(ctx, owner, desired()); err != nil {
		t.Fatalf("apply once the cache shows it: %v", err)
	}
	if len(a.recent.at) != 0 {
		t.Errorf("creates remembered after the cache showed them: %v", a.recent.at)
	}

	// Deleted by the operator: the next create is not a repeat.
	if err := a.DeleteStatefulSet(ctx, owner, "basic-tikv", "test"); err != nil {
		t.Fatal(err)
	}
	if err := indexer.Delete(created); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StatefulSet(ctx, owner, desired()); err != nil || creates() != 2 {
		t.Fatalf("create after a delete: err %v, %d creates; want 2", err, creates())
	}

	// Never shown (someone deleted it before the watch did): created again
	// after cacheLagLimit.
	if err := kube.AppsV1().StatefulSets("ns").Delete(ctx, "basic-tikv", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(cacheLagLimit - time.Millisecond)
	if _, err := a.StatefulSet(ctx, owner, desired()); creates() != 2 {
		t.Fatalf("apply within the limit: err %v, %d creates; want still 2", err, creates())
	}
	now = now.Add(time.Millisecond)
	if _, err := a.StatefulSet(ctx, owner, desired()); err != nil || creates() != 3 {
		t.Fatalf("apply after the limit: err %v, %d creates; want 3", err, creates())
	}
}

// TestRememberedWritesAreSweptAfterTheLimit: writes of objects never
// applied again do not stay in memory.
func TestRememberedWritesAreSweptAfterTheLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	r := &recentWrites{now: func() time.Time { return now }}
	r.wrote("StatefulSet/a/x")
	r.wrote("StatefulSet/b/x")
	now = now.Add(cacheLagLimit)
	r.wrote("StatefulSet/c/x")
	if len(r.at) != 1 {
		t.Fatalf("remembered %v, want only the newest", r.at)
	}
	if _, ok := r.pending("StatefulSet/c/x"); !ok {
		t.Error("the newest create is not pending")
	}
}

// TestAPVPatchTheCacheHasNotShownIsNotRepeated: a PV patch whose fields
// were all sent is not sent again while the PV cache shows the PV as it was
// when they were; once the cache moves (the patch arrived, or someone changed the
// PV), or after cacheLagLimit, it is.
func TestAPVPatchTheCacheHasNotShownIsNotRepeated(t *testing.T) {
	t.Parallel()
	a, kube, informers := newFakeApplier()
	a.pvLister = informers.Core().V1().PersistentVolumes().Lister()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a.recent.now = func() time.Time { return now }
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	ctx := context.Background()
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1", ResourceVersion: "1"}}
	if _, err := kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patches := func() int { return countActions(kube, "patch", "persistentvolumes") }
	retain := func() error {
		return a.PatchPV(ctx, owner, "pv-1", corev1.PersistentVolumeReclaimRetain, map[string]string{"app.kubernetes.io/managed-by": "tidb-operator"}, nil)
	}
	for range 2 { // not in the label-filtered cache yet, both times
		if err := retain(); err != nil {
			t.Fatal(err)
		}
	}
	if patches() != 1 {
		t.Fatalf("%d patches while the cache lagged, want 1", patches())
	}
	// A patch of fewer fields than the one sent (the reclaim step's, after
	// the labeller's with the IDs) is not sent either; one with a new
	// field is.
	if err := a.PatchPV(ctx, owner, "pv-1", corev1.PersistentVolumeReclaimRetain, nil, nil); err != nil || patches() != 1 {
		t.Fatalf("a patch of fields already sent: err %v, %d patches; want still 1", err, patches())
	}
	if err := a.PatchPV(ctx, owner, "pv-1", "", map[string]string{"tidb.pingcap.com/store-id": "4"}, nil); err != nil || patches() != 2 {
		t.Fatalf("a patch with a new field: err %v, %d patches; want 2", err, patches())
	}
	// The cache shows a version: the patch's, or someone's after it.
	indexer := informers.Core().V1().PersistentVolumes().Informer().GetIndexer()
	if err := indexer.Add(pv); err != nil {
		t.Fatal(err)
	}
	if err := retain(); err != nil || patches() != 3 {
		t.Fatalf("patch once the cache moved: err %v, %d patches; want 3", err, patches())
	}
	if err := retain(); err != nil || patches() != 3 {
		t.Fatalf("the same patch again at the same cached version: err %v, %d patches; want still 3", err, patches())
	}
	now = now.Add(cacheLagLimit)
	if err := retain(); err != nil || patches() != 4 {
		t.Fatalf("after the limit: err %v, %d patches; want 4", err, patches())
	}
}

// countActions counts kube's requests of verb on resource.
func countActions(kube *kubefake.Clientset, verb, resource string) int {
	n := 0
	for _, act := range kube.Actions() {
		if act.GetVerb() == verb && act.GetResource().Resource == resource {
			n++
		}
	}
	return n
}
