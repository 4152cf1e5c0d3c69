// Package tidbngmonitoring is the TidbNGMonitoring controller: a thin shell over
// the shared workload sync (pkg/controller/workload) with the objects of
// pkg/ngmonitoring, writing status.ngMonitoring (synced, phase, statefulSet) and the conditions once
// per sync through the status subresource.
package tidbngmonitoring

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
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/ngmonitoring"
)

// ControllerName is the queue name and the "controller" metric label.
const ControllerName = "tidbngmonitoring"

// Controller turns TidbNGMonitoring, child and TidbCluster events into queue
// keys and syncs each key.
type Controller struct {
	monitorings listers.TidbNGMonitoringLister
	clientset   versioned.Interface
	syncer      *workload.Syncer
	worker      *controller.Worker
}

// NewController returns the TidbNGMonitoring controller over deps (its lister
// and informer, the TidbCluster, StatefulSet, Service and ConfigMap
// caches, the clients and the recorder). It fails when a handler cannot be
// registered.
func NewController(deps *controller.Dependencies) (*Controller, error) {
	c := &Controller{
		monitorings: deps.TiDBNGMonitoringLister,
		clientset:   deps.Clientset,
		syncer: &workload.Syncer{Clusters: deps.TiDBClusterLister, StatefulSets: deps.StatefulSetLister,
			PVCs: deps.PVCLister, PVs: deps.PVLister,
			Writer: controller.NewApplier(deps), Recorder: deps.Recorder},
	}
	c.worker = controller.NewWorker(ControllerName, c.sync, deps.Metrics)
	_, err := deps.InformerFactory.Pingcap().V1alpha1().TidbNGMonitorings().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("tidbngmonitoring controller: register TidbNGMonitoring handler: %w", err)
	}
	owner := func(ns, name string) (types.UID, error) {
		tngm, err := c.monitorings.TidbNGMonitorings(ns).Get(name)
		if err != nil {
			return "", err
		}
		return tngm.UID, nil
	}
	if err := workload.RegisterChildHandlers(deps, c.worker, "TidbNGMonitoring", owner, c.dependents); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller) Worker() *controller.Worker { return c.worker }

// dependents lists the TidbNGMonitorings serving the cluster ns/name.
func (c *Controller) dependents(ns, name string) []string {
	all, err := c.monitorings.List(labels.Everything())
	if err != nil {
		return nil
	}
	var keys []string
	for _, tngm := range all {
		if ref, ok := ngmonitoring.ClusterRef(tngm); ok && ref.Namespace == ns && ref.Name == name {
			keys = append(keys, tngm.Namespace+"/"+tngm.Name)
		}
	}
	return keys
}

// sync reconciles the TidbNGMonitoring named by key. A deleted one ends the
// sync: its objects go with it through their owner references.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	cached, err := c.monitorings.TidbNGMonitorings(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get TidbNGMonitoring %s: %w", key, err)
	}
	tngm := cached.DeepCopy()
	st, syncErr := c.syncer.Sync(ctx, request(tngm))
	if err := c.writeStatus(ctx, tngm, st); err != nil {
		return err
	}
	if syncErr != nil {
		return fmt.Errorf("sync TidbNGMonitoring %s: %w", key, syncErr)
	}
	return nil
}

// request describes one sync of tngm.
func request(tngm *v1alpha1.TidbNGMonitoring) workload.Request {
	s := tngm.Status
	r := workload.Request{
		Owner: tngm,
		Status: workload.Status{ObservedGeneration: s.ObservedGeneration, Conditions: s.Conditions,
			Synced: s.NGMonitoring.Synced, Phase: s.NGMonitoring.Phase, StatefulSet: s.NGMonitoring.StatefulSet},
		StatefulSetName: ngmonitoring.ObjectName(tngm.Name),
		Paused:          tngm.Spec.Paused,
		Suspend:         suspended(tngm),
		Unsupported:     Unsupported(tngm),
	}
	r.PodLabels = ngmonitoring.PodLabels(tngm)
	if p := tngm.Spec.PVReclaimPolicy; p != nil {
		r.PVReclaimPolicy = *p
	}
	ref, ok := ngmonitoring.ClusterRef(tngm)
	switch {
	case tngm.DecodeError != nil:
		r.Invalid = tngm.DecodeError.Error()
	case !ok:
		r.Invalid = "spec.clusters names no TidbCluster"
	case tngm.Spec.NGMonitoring.Config.IsInvalid():
		r.Invalid = "spec.ngMonitoring.config: " + tngm.Spec.NGMonitoring.Config.InvalidReason
	}
	r.Cluster = ref
	r.Build = func(tc *v1alpha1.TidbCluster) (workload.Desired, error) { return build(tngm, tc) }
	return r
}

// build returns the Service, ConfigMap and StatefulSet of tngm; the
// StatefulSet carries the config's hash (used under RollingUpdate).
func build(tngm *v1alpha1.TidbNGMonitoring, tc *v1alpha1.TidbCluster) (workload.Desired, error) {
	cm, err := ngmonitoring.NewConfigMap(tngm, tc)
	if err != nil {
		return workload.Desired{}, err
	}
	hash, err := apply.Hash(cm.Data)
	if err != nil {
		return workload.Desired{}, fmt.Errorf("hash ng-monitoring config: %w", err)
	}
	sts, err := ngmonitoring.NewStatefulSet(tngm, tc, hash)
	if err != nil {
		return workload.Desired{}, err
	}
	return workload.Desired{Services: []*corev1.Service{ngmonitoring.NewService(tngm)}, ConfigMap: cm, StatefulSet: sts}, nil
}

// suspended reports suspendAction.suspendStatefulSet on ngMonitoring, else
// on the spec's top level.
func suspended(tngm *v1alpha1.TidbNGMonitoring) bool {
	a := tngm.Spec.NGMonitoring.SuspendAction
	if a == nil {
		a = tngm.Spec.SuspendAction
	}
	return a != nil && a.SuspendStatefulSet
}

// Unsupported names tngm's fields that are accepted but not acted on.
func Unsupported(tngm *v1alpha1.TidbNGMonitoring) []string {
	var out []string
	if len(tngm.Spec.Clusters) > 1 {
		out = append(out, "spec.clusters[1:]")
	}
	return out
}

// writeStatus writes st into tngm's status through the status subresource
// (a UID-guarded JSON patch) when it differs from the cached status.
func (c *Controller) writeStatus(ctx context.Context, tngm *v1alpha1.TidbNGMonitoring, st workload.Status) error {
	want := v1alpha1.TidbNGMonitoringStatus{ObservedGeneration: st.ObservedGeneration, Conditions: st.Conditions,
		NGMonitoring: v1alpha1.NGMonitoringStatus{Synced: st.Synced, Phase: st.Phase, StatefulSet: st.StatefulSet}}
	if equality.Semantic.DeepEqual(tngm.Status, want) {
		return nil
	}
	patch, err := workload.StatusPatch(tngm.UID, want)
	if err != nil {
		return err
	}
	if _, err := c.clientset.PingcapV1alpha1().TidbNGMonitorings(tngm.Namespace).Patch(ctx, tngm.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("update status of TidbNGMonitoring %s/%s: %w", tngm.Namespace, tngm.Name, err)
	}
	return nil
}
