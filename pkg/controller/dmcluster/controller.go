// Package dmcluster is the DMCluster controller: a thin workqueue shell
// (this file) around the sync that defaults, validates, runs discovery,
// dm-master and dm-worker in order and writes status once (control.go).
package dmcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ControllerName names the queue, the logs and the metric label.
const ControllerName = "dmcluster"

// Controller syncs DMClusters.
type Controller struct {
	deps    *controller.Dependencies
	control *Control
	worker  *controller.Worker
}

// NewController registers event handlers on the DMCluster informer and on
// the informers of the kinds a DM cluster owns, and returns the controller
// whose syncs run members in order. It fails only when an informer refuses
// a handler.
func NewController(deps *controller.Dependencies, members []Member) (*Controller, error) {
	c := &Controller{deps: deps, control: NewControl(members, deps.Clientset, deps.Recorder)}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)
	inf := deps.InformerFactory.Pingcap().V1alpha1().DMClusters().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	}); err != nil {
		return nil, fmt.Errorf("register DMCluster handler: %w", err)
	}
	owned := controller.EnqueueOwnerHandler(c.worker, "DMCluster", c.ownerUID)
	children := []cache.SharedIndexInformer{
		deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer(),
		deps.KubeInformerFactory.Apps().V1().Deployments().Informer(),
		deps.KubeInformerFactory.Core().V1().Services().Informer(),
		deps.KubeInformerFactory.Core().V1().ConfigMaps().Informer(),
	}
	for _, i := range children {
		if _, err := i.AddEventHandler(owned); err != nil {
			return nil, fmt.Errorf("register child handler: %w", err)
		}
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

func (c *Controller) ownerUID(namespace, name string) (types.UID, error) {
	dc, err := c.deps.DMClusterLister.DMClusters(namespace).Get(name)
	if err != nil {
		return "", err
	}
	return dc.UID, nil
}

// sync reads the DM cluster from the cache and hands a copy to the control.
// A cluster that is gone needs nothing: its children are garbage-collected
// through their owner references (PVCs stay, as in v1.6).
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	dc, err := c.deps.DMClusterLister.DMClusters(ns).Get(name)
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("DMCluster is gone")
		return nil
	}
	if err != nil {
		return fmt.Errorf("get DMCluster %s: %w", key, err)
	}
	return c.control.Sync(ctx, dc.DeepCopy())
}
