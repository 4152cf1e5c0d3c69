package controller

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// ChildUpdateDelay is how long an owner's sync waits after one of its
// children was added or updated, so that a burst of changes costs one sync.
const ChildUpdateDelay = 500 * time.Millisecond

// OwnerGetter returns the UID of the owner named namespace/name from a cache,
// or an error when it is not there.
type OwnerGetter func(namespace, name string) (types.UID, error)

// EnqueueOwnerHandler returns handlers for a child kind (StatefulSet,
// Service, ConfigMap …) that enqueue the child's controlling owner of the
// given kind. An event is dropped when the child has no such controllerRef,
// when the owner is not in the cache or has another UID (a recreated owner of
// the same name), and when an update is a resync (same resourceVersion).
//
// Adds and updates are enqueued ChildUpdateDelay late: a new StatefulSet's
// status changes several times within a fraction of a second as its pods
// are created, start and turn Ready, and one sync at the end of such a
// burst sees what a sync per change would see, with one status write
// instead of four. A delete is enqueued at once: the child must come back.
func EnqueueOwnerHandler(w *Worker, ownerKind string, getOwner OwnerGetter) cache.ResourceEventHandler {
	owner := func(obj any) (string, bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		child, ok := obj.(metav1.Object)
		if !ok {
			return "", false
		}
		ref := metav1.GetControllerOf(child)
		if ref == nil || ref.Kind != ownerKind {
			return "", false
		}
		uid, err := getOwner(child.GetNamespace(), ref.Name)
		if err != nil || uid != ref.UID {
			return "", false
		}
		return child.GetNamespace() + "/" + ref.Name, true
	}
	enqueueAfter := func(obj any, delay time.Duration) {
		if key, ok := owner(obj); ok {
			w.EnqueueAfter(key, delay)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { enqueueAfter(obj, ChildUpdateDelay) },
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(metav1.Object)
			n, ok2 := newObj.(metav1.Object)
			if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
				return
			}
			enqueueAfter(newObj, ChildUpdateDelay)
		},
		DeleteFunc: func(obj any) { enqueueAfter(obj, 0) },
	}
}
