// Package observe is the shell controller for kinds whose reconciliation is
// not implemented yet (Backup, Restore, BackupSchedule): it watches them,
// records one Normal event per object generation so users see the object was
// accepted, and writes nothing else.
package observe

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// ReasonObserved is the event reason recorded when an object is first seen.
const ReasonObserved = "Observed"

// Object is what an observed kind must be.
type Object interface {
	metav1.Object
	runtime.Object
}

// Getter reads an object from a lister.
type Getter[T Object] func(namespace, name string) (T, error)

// Controller observes one kind.
type Controller[T Object] struct {
	kind     string
	get      Getter[T]
	recorder record.EventRecorder
	worker   *controller.Worker

	mu   sync.Mutex
	seen map[string]int64 // key -> last generation an event was recorded for
}

// New returns a controller named name for kind, fed by informer.
func New[T Object](name, kind string, informer cache.SharedIndexInformer, get Getter[T],
	deps *controller.Dependencies) (*Controller[T], error) {
	c := &Controller[T]{kind: kind, get: get, recorder: deps.Recorder, seen: map[string]int64{}}
	c.worker = controller.NewWorker(name, c.sync, deps.Metrics)
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("register %s event handler: %w", kind, err)
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done.
func (c *Controller[T]) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller[T]) Worker() *controller.Worker { return c.worker }

func (c *Controller[T]) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return controller.Ignore(err)
	}
	obj, err := c.get(ns, name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.seen, key)
		c.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", c.kind, key, err)
	}
	c.mu.Lock()
	last, ok := c.seen[key]
	c.seen[key] = obj.GetGeneration()
	c.mu.Unlock()
	if ok && last == obj.GetGeneration() {
		return nil
	}
	klog.FromContext(ctx).Info("observed", "kind", c.kind, "object", klog.KObj(obj), "generation", obj.GetGeneration())
	c.recorder.Eventf(obj, "Normal", ReasonObserved,
		"%s accepted (generation %d); this operator version validates it but does not run its jobs yet",
		c.kind, obj.GetGeneration())
	return nil
}
