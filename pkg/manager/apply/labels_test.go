package apply

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// TestOwnedLabelsEditedByHandArePutBack changes an owned label of a
// converged Service by hand: the next apply writes it back and keeps a
// label only someone else set.
func TestOwnedLabelsEditedByHandArePutBack(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	a := NewApplier(deps.Dependencies)
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	desired := func() *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd", Namespace: "ns",
			Labels: map[string]string{"app.kubernetes.io/component": "pd"}}}
	}
	created, err := a.Service(context.Background(), owner, desired())
	if err != nil {
		t.Fatal(err)
	}
	indexer := deps.KubeInformerFactory.Core().V1().Services().Informer().GetIndexer()
	if err := indexer.Add(created); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Service(context.Background(), owner, desired()); err != nil {
		t.Fatal(err)
	}
	if n := len(deps.FakeKube.Actions()); n != 1 {
		t.Fatalf("a converged Service must not be written again: %d actions", n)
	}
	edited := created.DeepCopy()
	edited.Labels = map[string]string{"app.kubernetes.io/component": "tikv", "team": "db"}
	if err := indexer.Update(edited); err != nil {
		t.Fatal(err)
	}
	got, err := a.Service(context.Background(), owner, desired())
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["app.kubernetes.io/component"] != "pd" || got.Labels["team"] != "db" {
		t.Fatalf("labels after apply: %v; want the owned one put back and the foreign one kept", got.Labels)
	}
}

// TestObjectDroppedFromTheCacheIsPutBack: a StatefulSet whose managed-by
// label was changed by hand leaves the label-filtered cache; the create
// that follows finds it exists, and the apply reads it from the API and
// puts the label back instead of failing every sync.
func TestObjectDroppedFromTheCacheIsPutBack(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	a := NewApplier(deps.Dependencies)
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	desired := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "tidb-operator"}}}
	}
	created, err := a.ConfigMap(context.Background(), owner, desired())
	if err != nil {
		t.Fatal(err)
	}
	relabelled := created.DeepCopy()
	relabelled.Labels["app.kubernetes.io/managed-by"] = "someone-else"
	if _, err := deps.FakeKube.CoreV1().ConfigMaps("ns").Update(context.Background(), relabelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The cache never held it (as after the relabelling dropped it).
	got, err := a.ConfigMap(context.Background(), owner, desired())
	if err != nil {
		t.Fatalf("apply of an object missing from the cache: %v", err)
	}
	if got.Labels["app.kubernetes.io/managed-by"] != "tidb-operator" {
		t.Fatalf("labels %v, want managed-by put back", got.Labels)
	}
}
