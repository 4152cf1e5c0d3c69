package apply

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Any pingcap.com kind can own what an Applier writes: the controller
// reference and the events name its own kind, although listers hand out
// objects with an empty TypeMeta.
func TestApplyForAnOwnerOtherThanTidbCluster(t *testing.T) {
	t.Parallel()
	owner := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: types.UID("u1")}}
	kube := fake.NewClientset()
	rec := record.NewFakeRecorder(10)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	a := NewApplier(kube, rec, Caches{ConfigMaps: corelisters.NewConfigMapLister(indexer)})

	desired := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-conf", Namespace: "ns"}}
	got, err := a.ConfigMap(context.Background(), owner, desired)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	ref := metav1.GetControllerOf(got)
	if ref == nil || ref.Kind != "Backup" || ref.APIVersion != "pingcap.com/v1alpha1" || ref.Name != "nightly" || ref.UID != "u1" {
		t.Fatalf("controller reference %+v, want Backup nightly (u1) of pingcap.com/v1alpha1", ref)
	}
	want := []string{"Normal SuccessfulCreate create ConfigMap nightly-conf in Backup nightly successful"}
	if got := drain(rec); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
