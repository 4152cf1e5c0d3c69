// Package tidbdashboard is the TidbDashboard controller: a thin shell over
// the shared workload sync (pkg/controller/workload) with the objects of
// pkg/dashboard, writing status.synced/phase/statefulSet/conditions once
// per sync through the status subresource.
package tidbdashboard

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/workload"
	"github.com/kubetidb/tidb-operator/pkg/dashboard"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ControllerName is the queue name and the "controller" metric label.
const ControllerName = "tidbdashboard"

// Controller turns TidbDashboard, child and TidbCluster events into queue
// keys and syncs each key.
type Controller struct {
	dashboards listers.TidbDashboardLister
	clientset  versioned.Interface
	syncer     *workload.Syncer
	worker     *controller.Worker
}

// NewController returns the TidbDashboard controller over deps (its lister
// and informer, the TidbCluster, StatefulSet, Service and ConfigMap
// caches, the clients and the recorder). It fails when a handler cannot be
// registered.
func NewController(deps *controller.Dependencies) (*Controller, error) {
	c := &Controller{
		dashboards: deps.TiDBDashboardLister,
		clientset:  deps.Clientset,
		syncer: &workload.Syncer{Clusters: deps.TiDBClusterLister, StatefulSets: deps.StatefulSetLister,
			PVCs: deps.PVCLister, PVs: deps.PVLister,
			Writer: controller.NewApplier(deps), Recorder: deps.Recorder},
	}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)
	_, err := deps.InformerFactory.Pingcap().V1alpha1().TidbDashboards().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("tidbdashboard controller: register TidbDashboard handler: %w", err)
	}
	owner := func(ns, name string) (types.UID, error) {
		td, err := c.dashboards.TidbDashboards(ns).Get(name)
		if err != nil {
			return "", err
		}
		return td.UID, nil
	}
	if err := workload.RegisterChildHandlers(deps, c.worker, "TidbDashboard", owner, c.dependents); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

// dependents lists the TidbDashboards serving the cluster ns/name.
func (c *Controller) dependents(ns, name string) []string {
	all, err := c.dashboards.List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, td := range all {
		if ref, ok := dashboard.ClusterRef(td); ok && ref.Namespace == ns && ref.Name == name {
			keys = append(keys, td.Namespace+"/"+td.Name)
		}
	}
	return keys
}

// sync reconciles the TidbDashboard named by key. A deleted one ends the
// sync: its objects go with it through their owner references.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	cached, err := c.dashboards.TidbDashboards(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get TidbDashboard %s: %w", key, err)
	}
	td := cached.DeepCopy()
	st, syncErr := c.syncer.Sync(ctx, request(td))
	if err := c.writeStatus(ctx, td, st); err != nil {
		return err
	}
	if syncErr != nil {
		return fmt.Errorf("sync TidbDashboard %s: %w", key, syncErr)
	}
	return nil
}

// request describes one sync of td.
func request(td *v1alpha1.TidbDashboard) workload.Request {
	s := td.Status
	r := workload.Request{
		Owner:           td,
		Status:          workload.Status{ObservedGeneration: s.ObservedGeneration, Conditions: s.Conditions, Synced: s.Synced, Phase: s.Phase, StatefulSet: s.StatefulSet},
		StatefulSetName: dashboard.StatefulSetName(td.Name),
		Suspend:         td.Spec.SuspendAction != nil && td.Spec.SuspendAction.SuspendStatefulSet,
		Unsupported:     Unsupported(td),
	}
	r.PodLabels = dashboard.PodLabels(td)
	if p := td.Spec.PVReclaimPolicy; p != nil {
		r.PVReclaimPolicy = *p
	}
	ref, ok := dashboard.ClusterRef(td)
	switch {
	case td.DecodeError != nil:
		r.Invalid = td.DecodeError.Error()
	case !ok:
		r.Invalid = "spec.clusters names no TidbCluster"
	}
	r.Cluster = ref
	r.Build = func(tc *v1alpha1.TidbCluster) (workload.Desired, error) {
		sts, err := dashboard.NewStatefulSet(td, tc)
		if err != nil {
			return workload.Desired{}, err
		}
		return workload.Desired{Services: []*corev1.Service{dashboard.NewService(td)}, StatefulSet: sts}, nil
	}
	return r
}

// Unsupported names td's fields that are accepted but not acted on.
func Unsupported(td *v1alpha1.TidbDashboard) []string {
	var out []string
	if len(td.Spec.Clusters) > 1 {
		out = append(out, "spec.clusters[1:]")
	}
	return out
}

// writeStatus writes st into td's status through the status subresource
// (a UID-guarded JSON patch) when it differs from the cached status.
func (c *Controller) writeStatus(ctx context.Context, td *v1alpha1.TidbDashboard, st workload.Status) error {
	want := v1alpha1.TidbDashboardStatus{ObservedGeneration: st.ObservedGeneration, Conditions: st.Conditions,
		Synced: st.Synced, Phase: st.Phase, StatefulSet: st.StatefulSet}
	if equality.Semantic.DeepEqual(td.Status, want) {
		return nil
	}
	patch, err := workload.StatusPatch(td.UID, want)
	if err != nil {
		return err
	}
	if _, err := c.clientset.PingcapV1alpha1().TidbDashboards(td.Namespace).Patch(ctx, td.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("update status of TidbDashboard %s/%s: %w", td.Namespace, td.Name, err)
	}
	return nil
}
