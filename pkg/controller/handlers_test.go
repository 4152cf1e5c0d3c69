package controller

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

func TestEnqueueOwnerHandler(t *testing.T) {
	t.Parallel()
	owners := func(namespace, name string) (types.UID, error) { return "uid-1", nil }
	child := func(uid types.UID, rv string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-pd", ResourceVersion: rv,
			OwnerReferences: []metav1.OwnerReference{{Kind: "TidbCluster", Name: "db", UID: uid, Controller: ptr.To(true)}}}}
	}

	w := NewWorker("test-delete", nil, nil)
	h := EnqueueOwnerHandler(w, "TidbCluster", owners)
	h.OnAdd(child("uid-other", "1"), false)              // an old owner of the same name
	h.OnUpdate(child("uid-1", "1"), child("uid-1", "1")) // a resync
	if w.Len() != 0 {
		t.Fatalf("a foreign child or a resync enqueued the owner: queue length %d", w.Len())
	}
	h.OnDelete(child("uid-1", "1"))
	if w.Len() != 1 {
		t.Fatalf("a deleted child did not enqueue its owner at once: queue length %d", w.Len())
	}

	w = NewWorker("test-update", nil, nil)
	h = EnqueueOwnerHandler(w, "TidbCluster", owners)
	start := time.Now()
	h.OnAdd(child("uid-1", "1"), false)
	for rv := range 4 { // a burst of status updates
		h.OnUpdate(child("uid-1", "1"), child("uid-1", string(rune('2'+rv))))
	}
	if w.Len() != 0 {
		t.Fatalf("an add or update enqueued the owner before the delay: queue length %d", w.Len())
	}
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true,
		func(context.Context) (bool, error) { return w.Len() > 0, nil })
	if err != nil {
		t.Fatal("the owner of an updated child was never enqueued")
	}
	if waited := time.Since(start); waited < ChildUpdateDelay {
		t.Errorf("enqueued after %v, before the %v delay", waited, ChildUpdateDelay)
	}
	if w.Len() != 1 {
		t.Errorf("an add and four updates queued %d syncs, want 1", w.Len())
	}
}

func TestDropManagedFields(t *testing.T) {
	t.Parallel()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db-pd",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}, Labels: map[string]string{"a": "b"}}}
	got, err := DropManagedFields(sts)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*appsv1.StatefulSet); s.ManagedFields != nil || s.Labels["a"] != "b" {
		t.Errorf("after the transform: managedFields %v, labels %v; want nil and the labels kept", s.ManagedFields, s.Labels)
	}
	if _, err := DropManagedFields("not an object"); err != nil {
		t.Errorf("a value without metadata: %v", err)
	}
}
