// Package tidbmonitor is the TidbMonitor controller (spec §3.4): for each
// TidbMonitor it writes, through the write layer, the ServiceAccount, Role
// and RoleBinding of Prometheus' pod discovery, the ConfigMaps
// <tm>-monitor (the Prometheus configuration generated from the monitored
// TidbClusters) and <tm>-monitor-grafana, the Services and the StatefulSet
// (one per shard) that pkg/monitor builds, and reports Ready once every
// StatefulSet is rolled out and ready. A converged monitor costs no write.
//
// Wake-ups: the TidbMonitor, the objects it controls (by controller
// reference) and the TidbClusters it monitors (a cluster gaining TiFlash or
// TLS changes the configuration).
package tidbmonitor

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ControllerName is the queue name and the "controller" metric label.
const ControllerName = "tidbmonitor"

// Controller is the thin shell: informer events to queue keys, and each key
// through Control.Sync.
type Controller struct {
	monitors listers.TidbMonitorLister
	control  *Control
	worker   *controller.Worker
}

// NewController returns the TidbMonitor controller over deps (the
// TidbMonitor, TidbCluster, StatefulSet, Service and ConfigMap informers,
// the clientsets, the recorder and the metrics). It fails only when an event
// handler cannot be registered.
func NewController(deps *controller.Dependencies) (*Controller, error) {
	c := &Controller{monitors: deps.TiDBMonitorLister, control: NewControl(deps)}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)
	pingcap := deps.InformerFactory.Pingcap().V1alpha1()
	if _, err := pingcap.TidbMonitors().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	}); err != nil {
		return nil, fmt.Errorf("tidbmonitor controller: register TidbMonitor handler: %w", err)
	}
	if _, err := pingcap.TidbClusters().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueMonitorsOf,
		UpdateFunc: func(_, newObj any) { c.enqueueMonitorsOf(newObj) },
		DeleteFunc: c.enqueueMonitorsOf,
	}); err != nil {
		return nil, fmt.Errorf("tidbmonitor controller: register TidbCluster handler: %w", err)
	}
	owned := controller.EnqueueOwnerHandler(c.worker, "TidbMonitor", c.ownerUID)
	for _, inf := range []cache.SharedIndexInformer{
		deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer(),
		deps.KubeInformerFactory.Core().V1().Services().Informer(),
		deps.KubeInformerFactory.Core().V1().ConfigMaps().Informer(),
	} {
		if _, err := inf.AddEventHandler(owned); err != nil {
			return nil, fmt.Errorf("tidbmonitor controller: register child handler: %w", err)
		}
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

func (c *Controller) ownerUID(namespace, name string) (types.UID, error) {
	tm, err := c.monitors.TidbMonitors(namespace).Get(name)
	if err != nil {
		return "", err
	}
	return tm.UID, nil
}

// enqueueMonitorsOf enqueues every TidbMonitor that lists the TidbCluster obj.
func (c *Controller) enqueueMonitorsOf(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	tc, ok := obj.(*v1alpha1.TidbCluster)
	if !ok {
		return
	}
	all, err := c.monitors.List(labels.Everything())
	if err != nil {
		return
	}
	for _, tm := range all {
		if monitors(tm, tc.Namespace, tc.Name) {
			c.worker.Enqueue(tm)
		}
	}
}

// monitors reports whether tm lists the TidbCluster namespace/name.
func monitors(tm *v1alpha1.TidbMonitor, namespace, name string) bool {
	for _, ref := range tm.Spec.Clusters {
		ns := ref.Namespace
		if ns == "" {
			ns = tm.Namespace
		}
		if ns == namespace && ref.Name == name {
			return true
		}
	}
	return false
}

// sync reconciles the monitor named by key ("namespace/name"). A deleted
// monitor ends the sync (its objects go with it through their owner
// references); an invalid one returns an IgnoreError; API errors are
// returned wrapped and retried.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	cached, err := c.monitors.TidbMonitors(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.control.reports.forget(ns, name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get TidbMonitor %s: %w", key, err)
	}
	if err := c.control.Sync(ctx, cached.DeepCopy()); err != nil {
		return fmt.Errorf("sync TidbMonitor %s: %w", key, err)
	}
	return nil
}
