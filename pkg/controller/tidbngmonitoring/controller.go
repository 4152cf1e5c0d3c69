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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/workload"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/ngmonitoring"
)

// ControllerName is the queue name and the "controller" metric label.
const ControllerName = "tidbngmonitoring"

// Controller is the TidbNGMonitoring controller: the shared workload shell.
type Controller = workload.Controller[*v1alpha1.TidbNGMonitoring]

// NewController returns the TidbNGMonitoring controller over deps (its
// lister and informer, the TidbCluster, StatefulSet, Service and ConfigMap
// caches, the clients and the recorder). It fails when a handler cannot be
// registered.
func NewController(deps *controller.Dependencies) (*Controller, error) {
	lister := deps.TiDBNGMonitoringLister
	client := deps.Clientset
	return workload.NewController(deps, ControllerName, workload.Kind[*v1alpha1.TidbNGMonitoring]{
		Name:     "TidbNGMonitoring",
		Informer: deps.InformerFactory.Pingcap().V1alpha1().TidbNGMonitorings().Informer(),
		Get: func(ns, name string) (*v1alpha1.TidbNGMonitoring, error) {
			return lister.TidbNGMonitorings(ns).Get(name)
		},
		List:       func() ([]*v1alpha1.TidbNGMonitoring, error) { return lister.List(labels.Everything()) },
		ClusterRef: ngmonitoring.ClusterRef,
		Request:    NewRequest,
		WriteStatus: func(ctx context.Context, tngm *v1alpha1.TidbNGMonitoring, st workload.Status) error {
			return writeStatus(ctx, client, tngm, st)
		},
	})
}

// NewRequest describes one sync of tngm for the workload Syncer; render
// builds tngm's objects through its Build.
func NewRequest(tngm *v1alpha1.TidbNGMonitoring) workload.Request {
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
	default:
		ngm := &tngm.Spec.NGMonitoring
		r.Invalid = workload.InvalidStandalone(ngmonitoring.ObjectName(tngm.Name), nil, ngm.ResourceRequirements, "spec.ngMonitoring")
		if errs := validation.ValidateStandaloneImage(&ngm.ComponentSpec, ngm.BaseImage, field.NewPath("spec", "ngMonitoring")); r.Invalid == "" && len(errs) > 0 {
			r.Invalid = errs.ToAggregate().Error()
		}
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
func writeStatus(ctx context.Context, client versioned.Interface, tngm *v1alpha1.TidbNGMonitoring, st workload.Status) error {
	want := v1alpha1.TidbNGMonitoringStatus{ObservedGeneration: st.ObservedGeneration, Conditions: st.Conditions,
		NGMonitoring: v1alpha1.NGMonitoringStatus{Synced: st.Synced, Phase: st.Phase, StatefulSet: st.StatefulSet}}
	if equality.Semantic.DeepEqual(tngm.Status, want) {
		return nil
	}
	patch, err := workload.StatusPatch(tngm.UID, want)
	if err != nil {
		return err
	}
	if _, err := client.PingcapV1alpha1().TidbNGMonitorings(tngm.Namespace).Patch(ctx, tngm.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("update status of TidbNGMonitoring %s/%s: %w", tngm.Namespace, tngm.Name, err)
	}
	return nil
}
