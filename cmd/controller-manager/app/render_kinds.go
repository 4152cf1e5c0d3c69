package app

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbdashboard"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbinitializer"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbmonitor"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbngmonitoring"
	"github.com/kubetidb/tidb-operator/pkg/controller/workload"
	"github.com/kubetidb/tidb-operator/pkg/monitor"
)

// input is what render read: the objects of each kind it builds, in file
// order.
type input struct {
	clusters     []*v1alpha1.TidbCluster
	monitors     []*v1alpha1.TidbMonitor
	dashboards   []*v1alpha1.TidbDashboard
	ngms         []*v1alpha1.TidbNGMonitoring
	initializers []*v1alpha1.TidbInitializer
}

// add decodes doc as kind and keeps it; a kind render does not build is
// skipped. The kinds other than TidbCluster keep an unreadable spec in
// their DecodeError, which renderOthers reports.
func (in *input) add(kind string, doc []byte) error {
	var err error
	switch kind {
	case "TidbCluster":
		tc := &v1alpha1.TidbCluster{}
		if err = yaml.UnmarshalStrict(doc, tc); err == nil {
			err = checkSpecFields(doc)
		}
		in.clusters = append(in.clusters, tc)
	case "TidbMonitor":
		tm := &v1alpha1.TidbMonitor{}
		err = yaml.UnmarshalStrict(doc, tm)
		in.monitors = append(in.monitors, tm)
	case "TidbDashboard":
		td := &v1alpha1.TidbDashboard{}
		err = yaml.UnmarshalStrict(doc, td)
		in.dashboards = append(in.dashboards, td)
	case "TidbNGMonitoring":
		tngm := &v1alpha1.TidbNGMonitoring{}
		err = yaml.UnmarshalStrict(doc, tngm)
		in.ngms = append(in.ngms, tngm)
	case "TidbInitializer":
		ti := &v1alpha1.TidbInitializer{}
		err = yaml.UnmarshalStrict(doc, ti)
		in.initializers = append(in.initializers, ti)
	}
	return err
}

func (in *input) empty() bool {
	return len(in.clusters)+len(in.monitors)+len(in.dashboards)+len(in.ngms)+len(in.initializers) == 0
}

// setNamespace gives ns to every object whose YAML names none.
func (in *input) setNamespace(ns string) {
	var objs []metav1.Object
	for _, o := range in.clusters {
		objs = append(objs, o)
	}
	for _, o := range in.monitors {
		objs = append(objs, o)
	}
	for _, o := range in.dashboards {
		objs = append(objs, o)
	}
	for _, o := range in.ngms {
		objs = append(objs, o)
	}
	for _, o := range in.initializers {
		objs = append(objs, o)
	}
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(ns)
		}
	}
}

// cluster returns the TidbCluster ns/name of the input, or nil.
func (in *input) cluster(ns, name string) *v1alpha1.TidbCluster {
	for _, tc := range in.clusters {
		if tc.Namespace == ns && tc.Name == name {
			return tc
		}
	}
	return nil
}

// renderOthers builds the objects of every TidbMonitor, TidbDashboard,
// TidbNGMonitoring and TidbInitializer of the input as their controllers
// would, from the clusters as read (not defaulted), the Job running image.
// It errors on an invalid spec, and on a dashboard, NG Monitoring or
// initializer whose TidbCluster the input does not hold (a monitor scrapes
// a missing cluster's PD, TiKV and TiDB without TLS, as its controller does).
func (in *input) renderOthers(image string) ([]metav1.Object, error) {
	var out []metav1.Object
	for _, tm := range in.monitors {
		objs, err := in.monitorObjects(tm)
		if err != nil {
			return nil, fmt.Errorf("TidbMonitor %s: %w", tm.Name, err)
		}
		out = append(out, objs...)
	}
	for _, td := range in.dashboards {
		objs, err := in.workloadObjects(tidbdashboard.NewRequest(td))
		if err != nil {
			return nil, fmt.Errorf("TidbDashboard %s: %w", td.Name, err)
		}
		out = append(out, objs...)
	}
	for _, tngm := range in.ngms {
		objs, err := in.workloadObjects(tidbngmonitoring.NewRequest(tngm))
		if err != nil {
			return nil, fmt.Errorf("TidbNGMonitoring %s: %w", tngm.Name, err)
		}
		out = append(out, objs...)
	}
	for _, ti := range in.initializers {
		job, err := in.initializerJob(ti, image)
		if err != nil {
			return nil, fmt.Errorf("TidbInitializer %s: %w", ti.Name, err)
		}
		out = append(out, job)
	}
	return out, nil
}

func (in *input) monitorObjects(tm *v1alpha1.TidbMonitor) ([]metav1.Object, error) {
	if msg := tidbmonitor.Validate(tm); msg != "" {
		return nil, fmt.Errorf("invalid spec: %s", msg)
	}
	var targets []monitor.Target
	for _, ref := range tm.Spec.Clusters {
		ns := ref.Namespace
		if ns == "" {
			ns = tm.Namespace
		}
		targets = append(targets, monitor.TargetOf(ref, tm.Namespace, in.cluster(ns, ref.Name)))
	}
	if tm.Spec.DM != nil {
		for _, ref := range tm.Spec.DM.Clusters {
			targets = append(targets, monitor.DMTarget(ref, tm.Namespace))
		}
	}
	d, err := monitor.NewDesired(tm, targets)
	if err != nil {
		return nil, err
	}
	return d.Objects(), nil
}

func (in *input) workloadObjects(r workload.Request) ([]metav1.Object, error) {
	if r.Invalid != "" {
		return nil, fmt.Errorf("invalid spec: %s", r.Invalid)
	}
	tc := in.cluster(r.Cluster.Namespace, r.Cluster.Name)
	if tc == nil {
		return nil, fmt.Errorf("its TidbCluster %s/%s is not in the input", r.Cluster.Namespace, r.Cluster.Name)
	}
	d, err := r.Build(tc)
	if err != nil {
		return nil, err
	}
	return d.Objects(), nil
}

func (in *input) initializerJob(ti *v1alpha1.TidbInitializer, image string) (metav1.Object, error) {
	if msg := tidbinitializer.Validate(ti); msg != "" {
		return nil, fmt.Errorf("invalid spec: %s", msg)
	}
	ns := ti.Spec.Cluster.Namespace
	if ns == "" {
		ns = ti.Namespace
	}
	tc := in.cluster(ns, ti.Spec.Cluster.Name)
	if tc == nil {
		return nil, fmt.Errorf("its TidbCluster %s/%s is not in the input", ns, ti.Spec.Cluster.Name)
	}
	if tc.Spec.TiDB == nil {
		return nil, fmt.Errorf("its TidbCluster %s/%s has no TiDB", ns, tc.Name)
	}
	return tidbinitializer.NewJob(ti, tc, image), nil
}
