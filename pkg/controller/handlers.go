package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// OwnerGetter returns the UID of the owner named namespace/name from a cache,
// or an error when it is not there.
type OwnerGetter func(namespace, name string) (types.UID, error)

// EnqueueOwnerHandler returns handlers for a child kind (StatefulSet,
// Service, ConfigMap …) that enqueue the child's controlling owner of the
// given kind. An event is dropped when the child has no such controllerRef,
// when the owner is not in the cache or has another UID (a recreated owner of
// the same name), and when an update is a resync (same resourceVersion).
func EnqueueOwnerHandler(w *Worker, ownerKind string, getOwner OwnerGetter) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		child, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		ref := metav1.GetControllerOf(child)
		if ref == nil || ref.Kind != ownerKind {
			return
		}
		uid, err := getOwner(child.GetNamespace(), ref.Name)
		if err != nil || uid != ref.UID {
			return
		}
		w.EnqueueKey(child.GetNamespace() + "/" + ref.Name)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(metav1.Object)
			n, ok2 := newObj.(metav1.Object)
			if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}
