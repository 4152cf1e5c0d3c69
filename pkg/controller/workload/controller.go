package workload

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Object is a workload custom resource (a *TidbDashboard, a
// *TidbNGMonitoring) that copies itself.
type Object[T any] interface {
	metav1.Object
	DeepCopy() T
}

// Kind is what the shared controller shell knows of one workload kind.
type Kind[T Object[T]] struct {
	// Name is the kind ("TidbDashboard"), for events, errors and owner lookups.
	Name string
	// Informer delivers the kind's events.
	Informer cache.SharedIndexInformer
	// Get reads one object from the cache (NotFound when absent); List all.
	Get  func(namespace, name string) (T, error)
	List func() ([]T, error)
	// ClusterRef is the TidbCluster obj serves, when it names one.
	ClusterRef func(obj T) (v1alpha1.TidbClusterRef, bool)
	// Request describes one sync of obj (a copy the sync may change).
	Request func(obj T) Request
	// WriteStatus writes st into obj's status when it differs.
	WriteStatus func(ctx context.Context, obj T, st Status) error
}

// Controller is the queue-driven shell both workload controllers share:
// the kind's, its children's and its TidbClusters' events become keys, and
// each key is synced by the Syncer with the kind's Request, then its status
// written once.
type Controller[T Object[T]] struct {
	kind    Kind[T]
	syncer  *Syncer
	worker  *controller.Worker
	unknown *controller.UnknownFieldsReporter
}

// NewController returns the controller named name for kind over deps (the
// TidbCluster, StatefulSet, PVC and PV caches, the write layer and the
// recorder). It fails when a handler cannot be registered.
func NewController[T Object[T]](deps *controller.Dependencies, name string, kind Kind[T]) (*Controller[T], error) {
	c := &Controller[T]{kind: kind, syncer: &Syncer{Clusters: deps.TiDBClusterLister, StatefulSets: deps.StatefulSetLister,
		PVCs: deps.PVCLister, PVs: deps.PVLister, Writer: controller.NewApplier(deps), Recorder: deps.Recorder,
		PVsDenied: controller.PVsDenied(deps.CLIConfig)}}
	c.worker = controller.NewWorker(name, c.Sync, deps.Metrics)
	c.unknown = controller.NewUnknownFieldsReporter(deps.Recorder)
	_, err := kind.Informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("%s controller: register %s handler: %w", name, kind.Name, err)
	}
	owner := func(ns, n string) (types.UID, error) {
		obj, err := kind.Get(ns, n)
		if err != nil {
			return "", err
		}
		return obj.GetUID(), nil
	}
	if err := RegisterChildHandlers(deps, c.worker, kind.Name, owner, c.Dependents); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller[T]) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller[T]) Worker() *controller.Worker { return c.worker }

// Dependents lists the keys of the objects serving the cluster ns/name.
func (c *Controller[T]) Dependents(ns, name string) []string {
	all, err := c.kind.List()
	if err != nil {
		return nil
	}
	var keys []string
	for _, obj := range all {
		if ref, ok := c.kind.ClusterRef(obj); ok && ref.Namespace == ns && ref.Name == name {
			keys = append(keys, obj.GetNamespace()+"/"+obj.GetName())
		}
	}
	return keys
}

// Sync reconciles the object named by key and writes its status once. A
// deleted object ends the sync: its children go with it through their
// owner references. It returns the sync's error (after the status write)
// or the status write's.
func (c *Controller[T]) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	cached, err := c.kind.Get(ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", c.kind.Name, key, err)
	}
	if u, ok := any(cached).(controller.UnknownFieldsObject); ok {
		c.unknown.Report(u)
	}
	obj := cached.DeepCopy()
	st, syncErr := c.syncer.Sync(ctx, c.kind.Request(obj))
	if err := c.kind.WriteStatus(ctx, obj, st); err != nil {
		return err
	}
	if syncErr != nil {
		return fmt.Errorf("sync %s %s: %w", c.kind.Name, key, syncErr)
	}
	return nil
}
