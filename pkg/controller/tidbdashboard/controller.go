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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/workload"
	"github.com/kubetidb/tidb-operator/pkg/dashboard"
)

// ControllerName is the queue name and the "controller" metric label.
const ControllerName = "tidbdashboard"

// Controller is the TidbDashboard controller: the shared workload shell.
type Controller = workload.Controller[*v1alpha1.TidbDashboard]

// NewController returns the TidbDashboard controller over deps (its lister
// and informer, the TidbCluster, StatefulSet, Service and ConfigMap
// caches, the clients and the recorder). It fails when a handler cannot be
// registered.
func NewController(deps *controller.Dependencies) (*Controller, error) {
	lister := deps.TiDBDashboardLister
	client := deps.Clientset
	return workload.NewController(deps, ControllerName, workload.Kind[*v1alpha1.TidbDashboard]{
		Name:     "TidbDashboard",
		Informer: deps.InformerFactory.Pingcap().V1alpha1().TidbDashboards().Informer(),
		Get: func(ns, name string) (*v1alpha1.TidbDashboard, error) {
			return lister.TidbDashboards(ns).Get(name)
		},
		List:       func() ([]*v1alpha1.TidbDashboard, error) { return lister.List(labels.Everything()) },
		ClusterRef: dashboard.ClusterRef,
		Request:    NewRequest,
		WriteStatus: func(ctx context.Context, td *v1alpha1.TidbDashboard, st workload.Status) error {
			return writeStatus(ctx, client, td, st)
		},
	})
}

// NewRequest describes one sync of td for the workload Syncer; render
// builds td's objects through its Build.
func NewRequest(td *v1alpha1.TidbDashboard) workload.Request {
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
	default:
		r.Invalid = workload.InvalidStandalone(dashboard.StatefulSetName(td.Name), []string{dashboard.ServiceName(td.Name)},
			td.Spec.ResourceRequirements, "spec")
		if errs := validation.ValidateStandaloneImage(&td.Spec.ComponentSpec, td.Spec.BaseImage, field.NewPath("spec")); r.Invalid == "" && len(errs) > 0 {
			r.Invalid = errs.ToAggregate().Error()
		}
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
func writeStatus(ctx context.Context, client versioned.Interface, td *v1alpha1.TidbDashboard, st workload.Status) error {
	want := v1alpha1.TidbDashboardStatus{ObservedGeneration: st.ObservedGeneration, Conditions: st.Conditions,
		Synced: st.Synced, Phase: st.Phase, StatefulSet: st.StatefulSet}
	if equality.Semantic.DeepEqual(td.Status, want) {
		return nil
	}
	patch, err := workload.StatusPatch(td.UID, want)
	if err != nil {
		return err
	}
	if _, err := client.PingcapV1alpha1().TidbDashboards(td.Namespace).Patch(ctx, td.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("update status of TidbDashboard %s/%s: %w", td.Namespace, td.Name, err)
	}
	return nil
}
