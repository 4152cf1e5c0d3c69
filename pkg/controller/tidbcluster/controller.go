// Package tidbcluster is the TidbCluster controller: a thin workqueue shell
// (this file) around the control that runs the component managers in order
// and writes status once (control.go).
package tidbcluster

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ControllerName names the queue, the logs and the metric label.
const ControllerName = "tidbcluster"

// Controller syncs TidbClusters.
type Controller struct {
	deps    *controller.Dependencies
	control ControlInterface
	memory  *StatusMemory
	worker  *controller.Worker
}

// NewController registers event handlers on the TidbCluster informer and on
// the informers of the kinds a cluster owns, and returns the controller.
// components run in order on every sync. It fails only when an informer
// refuses a handler.
func NewController(deps *controller.Dependencies, components []Component) (*Controller, error) {
	memory := NewStatusMemory(deps.Clock, deps.CLIConfig.StatusRefreshInterval, deps.CLIConfig.StatusProgressInterval)
	control := NewDefaultControl(components, NewStatusUpdater(deps.Clientset), deps.Recorder, deps.Metrics, memory).(*defaultControl)
	control.cli = deps.CLIConfig
	c := &Controller{deps: deps, memory: memory, control: control}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)

	tcInformer := deps.InformerFactory.Pingcap().V1alpha1().TidbClusters().Informer()
	if _, err := tcInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: c.onUpdate,
		DeleteFunc: c.onDelete,
	}); err != nil {
		return nil, fmt.Errorf("register TidbCluster handler: %w", err)
	}
	owned := controller.EnqueueOwnerHandler(c.worker, "TidbCluster", c.ownerUID)
	children := []cache.SharedIndexInformer{
		deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer(),
		deps.KubeInformerFactory.Apps().V1().Deployments().Informer(),
		deps.KubeInformerFactory.Core().V1().Services().Informer(),
		deps.KubeInformerFactory.Core().V1().ConfigMaps().Informer(),
	}
	for _, inf := range children {
		if _, err := inf.AddEventHandler(owned); err != nil {
			return nil, fmt.Errorf("register child handler: %w", err)
		}
	}
	if _, err := deps.KubeInformerFactory.Core().V1().Pods().Informer().AddEventHandler(c.podMaintenanceHandler()); err != nil {
		return nil, fmt.Errorf("register pod handler: %w", err)
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

func (c *Controller) ownerUID(namespace, name string) (types.UID, error) {
	tc, err := c.deps.TiDBClusterLister.TidbClusters(namespace).Get(name)
	if err != nil {
		return "", err
	}
	return tc.UID, nil
}

// onUpdate enqueues a changed cluster, and every resync (same
// resourceVersion) so PD-derived status stays fresh, but not an update of
// the status alone: the operator writes status itself, and reacting to its
// own write would turn every status change into an immediate extra sync.
// A new version lets the status memory drop its copy of the status it
// holds (StatusMemory.Delivered).
func (c *Controller) onUpdate(oldObj, newObj any) {
	oldTC, ok1 := oldObj.(*v1alpha1.TidbCluster)
	newTC, ok2 := newObj.(*v1alpha1.TidbCluster)
	if ok1 && ok2 && oldTC.ResourceVersion != newTC.ResourceVersion {
		c.memory.Delivered(newTC)
		if statusOnly(oldTC, newTC) {
			return
		}
	}
	c.worker.Enqueue(newObj)
}

// statusOnly reports whether only the status differs between two versions.
func statusOnly(a, b *v1alpha1.TidbCluster) bool {
	return a.Generation == b.Generation && a.DeletionTimestamp.Equal(b.DeletionTimestamp) &&
		equality.Semantic.DeepEqual(a.Labels, b.Labels) && equality.Semantic.DeepEqual(a.Annotations, b.Annotations)
}

func (c *Controller) onDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if tc, ok := obj.(*v1alpha1.TidbCluster); ok {
		c.memory.Forget(tc.UID)
		if c.deps.Metrics != nil {
			c.deps.Metrics.ForgetCluster(tc.Namespace, tc.Name)
		}
	}
	c.worker.Enqueue(obj)
}

// sync reads the cluster from the cache and hands a copy to the control.
// A cluster that is gone needs nothing: its children are garbage-collected
// through their owner references.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	tc, err := c.deps.TiDBClusterLister.TidbClusters(ns).Get(name)
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("TidbCluster is gone")
		return nil
	}
	if err != nil {
		return fmt.Errorf("get TidbCluster %s: %w", key, err)
	}
	return c.control.UpdateTidbCluster(ctx, tc.DeepCopy())
}
