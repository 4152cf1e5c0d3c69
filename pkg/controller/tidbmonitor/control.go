package tidbmonitor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
	"github.com/kubetidb/tidb-operator/pkg/monitor"
)

// Condition types and event reasons of a TidbMonitor.
const (
	ConditionReady       = "Ready"
	ConditionUnsupported = "Unsupported"
	ConditionInvalid     = "Invalid"

	ReasonFailedValidation = "FailedValidation"
	ReasonUnsupported      = "Unsupported"
)

// Control is the ordered sync of one TidbMonitor: validate, read the
// monitored clusters, write the objects, then the status once.
type Control struct {
	applier  *apply.Applier
	clusters listers.TidbClusterLister
	sets     appslisters.StatefulSetLister
	pvcs     corelisters.PersistentVolumeClaimLister
	pvs      corelisters.PersistentVolumeLister
	client   versioned.Interface
	kube     kubernetes.Interface
	recorder record.EventRecorder
	reports  *reporter
	unknown  *controller.UnknownFieldsReporter
	// pvsDenied names what a persistent monitor misses without PVs (controller.PVsDenied).
	pvsDenied string
}

// NewControl returns the control over deps' write layer, listers,
// clientsets (the kube one reads the Secrets and ConfigMap a monitor names)
// and recorder.
func NewControl(deps *controller.Dependencies) *Control {
	return &Control{
		applier:   controller.NewApplier(deps),
		clusters:  deps.TiDBClusterLister,
		sets:      deps.StatefulSetLister,
		pvcs:      deps.PVCLister,
		pvs:       deps.PVLister,
		client:    deps.Clientset,
		kube:      deps.KubeClient,
		recorder:  deps.Recorder,
		reports:   newReporter(deps.Recorder),
		unknown:   controller.NewUnknownFieldsReporter(deps.Recorder),
		pvsDenied: controller.PVsDenied(deps.CLIConfig),
	}
}

// Sync reconciles tm (a copy it may modify). An unreadable or invalid spec
// sets the Invalid condition, records one FailedValidation Warning per
// generation and returns an IgnoreError; a missing Secret or ConfigMap
// sets Ready False, records one Warning per generation and returns a
// RequeueAfter, writing nothing else; API errors are returned wrapped.
func (c *Control) Sync(ctx context.Context, tm *v1alpha1.TidbMonitor) error {
	c.unknown.Report(tm)
	ctx, batch := apply.WithEventBatch(ctx)
	defer batch.Flush(c.recorder, tm)
	status := tm.Status.DeepCopy()
	status.ObservedGeneration = tm.Generation
	d, problem := desired(tm, c.targets(tm))
	if problem != "" {
		return c.invalid(ctx, tm, status, problem)
	}
	c.reports.clear(tm, ReasonFailedValidation)
	meta.RemoveStatusCondition(&status.Conditions, ConditionInvalid)
	c.reportUnsupported(tm, status)
	if reason, msg, err := c.missingReference(ctx, tm); err != nil || reason != "" {
		return c.waitReference(ctx, tm, status, reason, msg, err)
	}
	c.reports.clear(tm, ReasonSecretNotFound)
	c.reports.clear(tm, ReasonConfigMapNotFound)

	sets, err := c.apply(ctx, tm, d)
	if err != nil {
		return err
	}
	pv, err := c.reclaim(ctx, tm)
	if err != nil {
		return err
	}
	if pv != "" {
		status.DeploymentStorageStatus = &v1alpha1.DeploymentStorageStatus{PvName: pv}
	}
	ready, why := rolledOut(tm, sets)
	reason := "StatefulSetsReady"
	if !ready {
		reason = "StatefulSetsNotReady"
	}
	setCondition(status, tm, ConditionReady, ready, reason, why)
	return c.writeStatus(ctx, tm, status)
}

// invalid reports problem (tm cannot be acted on): one FailedValidation
// Warning per generation, Invalid True and Ready False in the status, no
// other write. It returns the status write's error, else an IgnoreError.
func (c *Control) invalid(ctx context.Context, tm *v1alpha1.TidbMonitor, status *v1alpha1.TidbMonitorStatus, problem string) error {
	c.reports.once(tm, corev1.EventTypeWarning, ReasonFailedValidation, problem)
	setCondition(status, tm, ConditionInvalid, true, ReasonFailedValidation, problem)
	setCondition(status, tm, ConditionReady, false, ReasonFailedValidation, problem)
	if err := c.writeStatus(ctx, tm, status); err != nil {
		return err
	}
	return flow.Ignore(errors.New(problem))
}

// waitReference reports a missing Secret or ConfigMap (reason, msg): one
// Warning per generation, Ready False, nothing else written, and a look
// again after RecheckDelay; or returns err, the failed read.
func (c *Control) waitReference(ctx context.Context, tm *v1alpha1.TidbMonitor, status *v1alpha1.TidbMonitorStatus, reason, msg string, err error) error {
	if err != nil {
		return err
	}
	c.reports.once(tm, corev1.EventTypeWarning, reason, msg)
	setCondition(status, tm, ConditionReady, false, reason, msg)
	if err := c.writeStatus(ctx, tm, status); err != nil {
		return err
	}
	return flow.RequeueAfter(RecheckDelay, "%s", msg)
}

// desired validates tm, builds its objects for targets and checks them
// with the API server's create rules (pkg/manager/precheck), so that a
// spec the API server would refuse in the StatefulSet (a negative memory
// limit, a toleration operator Maybe) writes nothing rather than the
// ServiceAccount, ConfigMaps and Services before it. It returns the
// objects, or what makes tm unusable.
func desired(tm *v1alpha1.TidbMonitor, targets []monitor.Target) (*monitor.Desired, string) {
	if problem := Validate(tm); problem != "" {
		return nil, problem
	}
	d, err := monitor.NewDesired(tm, targets)
	if err != nil {
		return nil, err.Error()
	}
	if errs := precheck.Objects(d.Objects()); len(errs) > 0 {
		return nil, "the objects built from the spec would be refused: " + errs.ToAggregate().Error()
	}
	return d, ""
}

// Validate returns what makes tm unusable, or "". It is pure: the
// controller and render both call it before building the objects.
func Validate(tm *v1alpha1.TidbMonitor) string {
	if errs := validateImages(tm); len(errs) > 0 {
		return errs.ToAggregate().Error()
	}
	switch {
	case tm.DecodeError != nil:
		return fmt.Sprintf("spec cannot be read: %v", tm.DecodeError)
	case len(tm.Spec.Clusters) == 0 && (tm.Spec.DM == nil || len(tm.Spec.DM.Clusters) == 0):
		return "spec.clusters names no TidbCluster to monitor"
	case len(monitor.StatefulSet(tm.Name, monitor.Shards(tm)-1, monitor.Shards(tm))) > 52:
		return fmt.Sprintf("metadata.name %q is too long: StatefulSet %s exceeds 52 characters", tm.Name,
			monitor.StatefulSet(tm.Name, monitor.Shards(tm)-1, monitor.Shards(tm)))
	}
	if tm.Spec.Persistent && tm.Spec.Storage != "" {
		// The schema leaves spec.storage a plain string; a size that is
		// no positive quantity would otherwise fail the build (or the
		// PVC) after the ServiceAccount and ConfigMaps were written.
		q, err := resource.ParseQuantity(tm.Spec.Storage)
		switch {
		case err != nil:
			return fmt.Sprintf("spec.storage %q is not a quantity: %v", tm.Spec.Storage, err)
		case q.Sign() <= 0:
			return fmt.Sprintf("spec.storage %q must be greater than zero", tm.Spec.Storage)
		}
	}
	for i, ref := range tm.Spec.Clusters {
		if ref.Name == "" {
			return fmt.Sprintf("spec.clusters[%d].name is empty", i)
		}
	}
	return ""
}

// validateImages checks the base image and version of every container a
// TidbMonitor may run; the API server checks no image syntax, so a bad one
// would be written and its pod would never pull.
func validateImages(tm *v1alpha1.TidbMonitor) field.ErrorList {
	spec, p := &tm.Spec, field.NewPath("spec")
	containers := map[string]*v1alpha1.MonitorContainer{"prometheus": &spec.Prometheus.MonitorContainer,
		"reloader": &spec.Reloader.MonitorContainer, "initializer": &spec.Initializer.MonitorContainer}
	if spec.Grafana != nil {
		containers["grafana"] = &spec.Grafana.MonitorContainer
	}
	if spec.PrometheusReloader != nil {
		containers["prometheusReloader"] = &spec.PrometheusReloader.MonitorContainer
	}
	if spec.Thanos != nil {
		containers["thanos"] = &spec.Thanos.MonitorContainer
	}
	var errs field.ErrorList
	for _, name := range []string{"prometheus", "grafana", "reloader", "initializer", "prometheusReloader", "thanos"} {
		if mc := containers[name]; mc != nil {
			errs = append(errs, validation.ValidateBaseImageVersion(mc.BaseImage, mc.Version, p.Child(name))...)
		}
	}
	return errs
}

// reportUnsupported sets the Unsupported condition (removed when nothing
// is) and records one Warning per generation naming the fields.
func (c *Control) reportUnsupported(tm *v1alpha1.TidbMonitor, status *v1alpha1.TidbMonitorStatus) {
	fields := monitor.Unsupported(tm)
	if c.pvsDenied != "" && tm.Spec.Persistent {
		fields = append(fields, c.pvsDenied)
	}
	if len(fields) == 0 {
		c.reports.clear(tm, ReasonUnsupported)
		meta.RemoveStatusCondition(&status.Conditions, ConditionUnsupported)
		return
	}
	msg := "accepted but not acted on: " + strings.Join(fields, "; ")
	c.reports.once(tm, corev1.EventTypeWarning, ReasonUnsupported, msg)
	setCondition(status, tm, ConditionUnsupported, true, ReasonUnsupported, msg)
}

// targets reads each monitored TidbCluster from the cache; a cluster the
// cache does not hold (not yet created, or outside the operator's
// namespace) is scraped for PD, TiKV and TiDB without TLS.
func (c *Control) targets(tm *v1alpha1.TidbMonitor) []monitor.Target {
	var out []monitor.Target
	for _, ref := range tm.Spec.Clusters {
		ns := ref.Namespace
		if ns == "" {
			ns = tm.Namespace
		}
		tc, err := c.clusters.TidbClusters(ns).Get(ref.Name)
		if err != nil {
			tc = nil
		}
		out = append(out, monitor.TargetOf(ref, tm.Namespace, tc))
	}
	if tm.Spec.DM != nil {
		for _, ref := range tm.Spec.DM.Clusters {
			out = append(out, monitor.DMTarget(ref, tm.Namespace))
		}
	}
	return out
}

// apply writes d, the objects of tm, in the order of monitor.Desired.Objects
// (identity, then configuration, then Services, then the StatefulSets that
// use them), deletes the shards no longer desired, and returns the live
// StatefulSets.
func (c *Control) apply(ctx context.Context, tm *v1alpha1.TidbMonitor, d *monitor.Desired) ([]*appsv1.StatefulSet, error) {
	if _, err := c.applier.ServiceAccount(ctx, tm, d.ServiceAccount); err != nil {
		return nil, err
	}
	if _, err := c.applier.Role(ctx, tm, d.Role); err != nil {
		return nil, err
	}
	if _, err := c.applier.RoleBinding(ctx, tm, d.RoleBinding); err != nil {
		return nil, err
	}
	for _, cm := range d.ConfigMaps {
		if _, err := c.applier.ConfigMap(ctx, tm, cm); err != nil {
			return nil, err
		}
	}
	for _, svc := range d.Services {
		if _, err := c.applier.Service(ctx, tm, svc); err != nil {
			return nil, err
		}
	}
	live := make([]*appsv1.StatefulSet, 0, len(d.StatefulSets))
	for _, sts := range d.StatefulSets {
		got, err := c.applier.StatefulSet(ctx, tm, sts)
		if err != nil {
			return nil, err
		}
		live = append(live, got)
	}
	if err := c.deleteStaleShards(ctx, tm, d.StatefulSets); err != nil {
		return nil, err
	}
	return live, nil
}

// rolledOut reports whether every StatefulSet has observed its spec and has
// all replicas updated and ready, and otherwise which is not.
func rolledOut(tm *v1alpha1.TidbMonitor, sets []*appsv1.StatefulSet) (bool, string) {
	want := monitor.Replicas(tm)
	for _, s := range sets {
		st := s.Status
		if st.ObservedGeneration < s.Generation || st.ReadyReplicas < want || st.UpdatedReplicas < want ||
			(st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision) {
			return false, fmt.Sprintf("StatefulSet %s: %d/%d ready, %d updated", s.Name, st.ReadyReplicas, want, st.UpdatedReplicas)
		}
	}
	return true, fmt.Sprintf("%d StatefulSet(s) ready", len(sets))
}

func setCondition(status *v1alpha1.TidbMonitorStatus, tm *v1alpha1.TidbMonitor, typ string, ok bool, reason, msg string) {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason,
		Message: msg, ObservedGeneration: tm.Generation})
}

// writeStatus writes status through the status subresource when it differs
// from what tm carries.
func (c *Control) writeStatus(ctx context.Context, tm *v1alpha1.TidbMonitor, status *v1alpha1.TidbMonitorStatus) error {
	if equality.Semantic.DeepEqual(&tm.Status, status) {
		return nil
	}
	tm.Status = *status
	_, err := c.client.PingcapV1alpha1().TidbMonitors(tm.Namespace).UpdateStatus(ctx, tm, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return flow.Requeue("status of TidbMonitor %s/%s changed meanwhile", tm.Namespace, tm.Name)
	}
	if err != nil {
		return fmt.Errorf("update status of TidbMonitor %s/%s: %w", tm.Namespace, tm.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("status written", "ready", meta.IsStatusConditionTrue(status.Conditions, ConditionReady))
	return nil
}
