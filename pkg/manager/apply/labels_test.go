package apply

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// newFakeApplier returns an Applier over an empty fake clientset and
// unstarted informer caches (tests seed the indexers), with the clientset
// for its recorded actions and the factory for its indexers. The package
// cannot use controller.NewFakeDependencies: the controller imports apply.
func newFakeApplier() (*Applier, *kubefake.Clientset, kubeinformers.SharedInformerFactory) {
	kube := kubefake.NewClientset()
	f := kubeinformers.NewSharedInformerFactory(kube, 0)
	a := NewApplier(kube, record.NewFakeRecorder(100), Caches{
		Services:        f.Core().V1().Services().Lister(),
		ConfigMaps:      f.Core().V1().ConfigMaps().Lister(),
		StatefulSets:    f.Apps().V1().StatefulSets().Lister(),
		Deployments:     f.Apps().V1().Deployments().Lister(),
		ServiceAccounts: f.Core().V1().ServiceAccounts().Lister(),
		Roles:           f.Rbac().V1().Roles().Lister(),
		RoleBindings:    f.Rbac().V1().RoleBindings().Lister(),
	})
	return a, kube, f
}

// TestOwnedLabelsEditedByHandArePutBack changes an owned label of a
// converged Service by hand: the next apply writes it back and keeps a
// label only someone else set.
func TestOwnedLabelsEditedByHandArePutBack(t *testing.T) {
	t.Parallel()
	a, kube, informers := newFakeApplier()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	desired := func() *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd", Namespace: "ns",
			Labels: map[string]string{"app.kubernetes.io/component": "pd"}}}
	}
	created, err := a.Service(context.Background(), owner, desired())
	if err != nil {
		t.Fatal(err)
	}
	indexer := informers.Core().V1().Services().Informer().GetIndexer()
	if err := indexer.Add(created); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Service(context.Background(), owner, desired()); err != nil {
		t.Fatal(err)
	}
	if n := len(kube.Actions()); n != 1 {
		t.Fatalf("a converged Service must not be written again: %d actions", n)
	}
	edited := created.DeepCopy()
	edited.Labels = map[string]string{"app.kubernetes.io/component": "tikv", "team": "db"}
	if _, err := kube.CoreV1().Services("ns").Update(context.Background(), edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
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
	a, kube, informers := newFakeApplier()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	desired := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv", Namespace: "ns",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "tidb-operator"}}}
	}
	created, err := a.ConfigMap(context.Background(), owner, desired())
	if err != nil {
		t.Fatal(err)
	}
	// The cache shows it (a sync reads it there), then loses it to the
	// relabelling.
	indexer := informers.Core().V1().ConfigMaps().Informer().GetIndexer()
	if err := indexer.Add(created); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConfigMap(context.Background(), owner, desired()); err != nil {
		t.Fatal(err)
	}
	relabelled := created.DeepCopy()
	relabelled.Labels["app.kubernetes.io/managed-by"] = "someone-else"
	if _, err := kube.CoreV1().ConfigMaps("ns").Update(context.Background(), relabelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := indexer.Delete(created); err != nil {
		t.Fatal(err)
	}
	got, err := a.ConfigMap(context.Background(), owner, desired())
	if err != nil {
		t.Fatalf("apply of an object missing from the cache: %v", err)
	}
	if got.Labels["app.kubernetes.io/managed-by"] != "tidb-operator" {
		t.Fatalf("labels %v, want managed-by put back", got.Labels)
	}
}
