// Package tidbinitializer is the TidbInitializer controller (spec §3.4):
// once some TiDB member of the named TidbCluster is healthy, it creates the
// Job `<tc>-tidb-initializer`, which runs `/backup-manager tidb-initializer`
// from the operator's image (package initializer: root's password from
// passwordSecret, its users, the init SQL, permitHost), and mirrors the
// Job's status and phase (Pending → Running → Completed | Failed) into the
// TidbInitializer's. Completed is final; after a failure, deleting the Job
// runs a new one.
//
// spec.image names the TiDB Operator's Python image; the program here is
// Go and lives in the operator's image (--tidb-backup-manager-image), so
// spec.image is accepted and not acted on.
package tidbinitializer

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
const ControllerName = "tidbinitializer"

// Kind is the owner kind of the initializer Jobs.
const Kind = "TidbInitializer"

// Controller is the thin shell: informer events to queue keys, and each key
// through Control.Sync.
type Controller struct {
	initializers listers.TidbInitializerLister
	control      *Control
	worker       *controller.Worker
}

// NewController returns the TidbInitializer controller over deps: the
// TidbInitializer, TidbCluster and Job informers (Jobs labelled
// managed-by=tidb-operator, from the labelled kube factory), the
// clientsets, the recorder, the clock and the backup-manager image (the
// operator's). It fails only when an event handler cannot be registered.
func NewController(deps *controller.Dependencies) (*Controller, error) {
	jobs := deps.KubeInformerFactory.Batch().V1().Jobs()
	c := &Controller{
		initializers: deps.TiDBInitializerLister,
		control: NewControl(deps.TiDBClusterLister, jobs.Lister(), deps.Clientset, deps.KubeClient, deps.Recorder,
			deps.Clock, deps.CLIConfig.TiDBBackupManagerImage),
	}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)
	pingcap := deps.InformerFactory.Pingcap().V1alpha1()
	// Every update is enqueued, resyncs included: the resync rechecks a
	// missing Secret or ConfigMap, which no informer watches.
	if _, err := pingcap.TidbInitializers().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	}); err != nil {
		return nil, fmt.Errorf("tidbinitializer controller: register TidbInitializer handler: %w", err)
	}
	owner := func(ns, name string) (types.UID, error) {
		ti, err := deps.TiDBInitializerLister.TidbInitializers(ns).Get(name)
		if err != nil {
			return "", err
		}
		return ti.UID, nil
	}
	if _, err := jobs.Informer().AddEventHandler(controller.EnqueueOwnerHandler(c.worker, Kind, owner)); err != nil {
		return nil, fmt.Errorf("tidbinitializer controller: register Job handler: %w", err)
	}
	if _, err := pingcap.TidbClusters().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueForCluster,
		UpdateFunc: func(_, newObj any) { c.enqueueForCluster(newObj) },
	}); err != nil {
		return nil, fmt.Errorf("tidbinitializer controller: register TidbCluster handler: %w", err)
	}
	return c, nil
}

// enqueueForCluster enqueues the TidbInitializers naming the TidbCluster
// obj that have no Job yet: the cluster appeared or its TiDB turned healthy.
func (c *Controller) enqueueForCluster(obj any) {
	tc, ok := obj.(*v1alpha1.TidbCluster)
	if !ok {
		return
	}
	all, err := c.initializers.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ti := range all {
		if ti.Spec.Cluster.Name == tc.Name && clusterNamespace(ti) == tc.Namespace && ti.Status.Phase != v1alpha1.InitializePhaseCompleted &&
			ti.Status.Phase != v1alpha1.InitializePhaseRunning {
			c.worker.Enqueue(ti)
		}
	}
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

// sync reconciles the TidbInitializer named by key ("namespace/name"). A
// deleted one ends the sync (its Job goes with it through the owner
// reference).
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	cached, err := c.initializers.TidbInitializers(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.control.reports.forget(ns, name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get TidbInitializer %s: %w", key, err)
	}
	if err := c.control.Sync(ctx, cached.DeepCopy()); err != nil {
		return fmt.Errorf("sync TidbInitializer %s: %w", key, err)
	}
	return nil
}
