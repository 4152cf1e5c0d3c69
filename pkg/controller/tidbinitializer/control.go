package tidbinitializer

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Event reasons recorded on a TidbInitializer, and the reasons of its
// Invalid condition.
const (
	ReasonSuccessfulCreate  = "SuccessfulCreate"
	ReasonFailedCreate      = "FailedCreate"
	ReasonFailedValidation  = "FailedValidation"
	ReasonClusterNotFound   = "ClusterNotFound"
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonConfigMapNotFound = "ConfigMapNotFound"
	ReasonJobConflict       = "JobConflict"
)

// RecheckDelay is how often a missing Secret or ConfigMap is looked for
// again: the operator watches neither (only the objects it labels).
const RecheckDelay = 15 * time.Second

// Control runs the sync of one TidbInitializer (see Sync).
type Control struct {
	clusters listers.TidbClusterLister
	jobs     batchlisters.JobLister
	client   versioned.Interface
	kube     kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.PassiveClock
	image    string
	reports  *reporter
	unknown  *controller.UnknownFieldsReporter
	// unsupported warns once per generation about the fields not acted on.
	unsupported *reporter
}

// NewControl returns the control over the TidbCluster and Job caches, the
// clientsets it reads references and writes with, the recorder of its
// events, the clock of its conditions and the image the Jobs run (the
// operator's own, which holds /backup-manager).
func NewControl(clusters listers.TidbClusterLister, jobs batchlisters.JobLister, client versioned.Interface,
	kube kubernetes.Interface, recorder record.EventRecorder, clk clock.PassiveClock, image string) *Control {
	return &Control{clusters: clusters, jobs: jobs, client: client, kube: kube, recorder: recorder, clock: clk,
		image: image, reports: newReporter(recorder), unsupported: newReporter(recorder),
		unknown: controller.NewUnknownFieldsReporter(recorder)}
}

// Sync reconciles ti, a copy the caller owns, in order: validate the spec;
// with the Job `<tc>-tidb-initializer` present, mirror its status; else
// (unless an earlier Job Completed, which is final) look up the cluster,
// passwordSecret and initSqlConfigMap, check the Job with the API
// server's rules, wait until some TiDB member is healthy, and create the
// Job. The status is written once, only if it
// changed. An invalid spec, a Job the API server would refuse or a Job of
// that name not controlled by ti is an IgnoreError, a missing Secret or ConfigMap a wait of RecheckDelay, a
// missing cluster or an unhealthy TiDB nil (TidbCluster events wake ti);
// API errors are returned wrapped and retried.
func (c *Control) Sync(ctx context.Context, ti *v1alpha1.TidbInitializer) error {
	c.unknown.Report(ti)
	st, err := c.desiredStatus(ctx, ti)
	st = c.withUnsupported(ti, st)
	if !equality.Semantic.DeepEqual(&ti.Status, &st) {
		err = errors.Join(err, c.writeStatus(ctx, ti, st))
	}
	return err
}

func (c *Control) desiredStatus(ctx context.Context, ti *v1alpha1.TidbInitializer) (v1alpha1.TidbInitializerStatus, error) {
	if msg := Validate(ti); msg != "" {
		return c.pending(ti, ReasonFailedValidation, msg), flow.Ignore(fmt.Errorf("TidbInitializer %s/%s: %s", ti.Namespace, ti.Name, msg))
	}
	name := names.Initializer(ti.Spec.Cluster.Name)
	job, err := c.jobs.Jobs(ti.Namespace).Get(name)
	if err == nil {
		if !metav1.IsControlledBy(job, ti) {
			msg := fmt.Sprintf("Job %s exists and is not this TidbInitializer's; delete it or this TidbInitializer", name)
			return c.pending(ti, ReasonJobConflict, msg), flow.Ignore(errors.New(msg))
		}
		c.reports.forget(ti.Namespace, ti.Name)
		return mirrorStatus(job), nil
	}
	if !apierrors.IsNotFound(err) {
		return ti.Status, fmt.Errorf("get Job %s/%s: %w", ti.Namespace, name, err)
	}
	if ti.Status.Phase == v1alpha1.InitializePhaseCompleted {
		// Final: the cluster was initialized; a Job deleted afterwards is not run again.
		return ti.Status, nil
	}
	tc, st, err := c.inputs(ctx, ti)
	if tc == nil {
		return st, err
	}
	want := NewJob(ti, tc, c.image)
	if msg := refusedJob(want); msg != "" {
		return c.pending(ti, ReasonFailedValidation, msg), flow.Ignore(fmt.Errorf("TidbInitializer %s/%s: %s", ti.Namespace, ti.Name, msg))
	}
	c.reports.forget(ti.Namespace, ti.Name)
	if !tidbHealthy(tc) {
		klog.FromContext(ctx).V(2).Info("waiting for a healthy TiDB before the initializer Job", "tidbinitializer", klog.KObj(ti))
		return pendingStatus(&ti.Status, "", "", c.now()), nil
	}
	created, err := c.createJob(ctx, ti, want)
	if err != nil {
		return ti.Status, err
	}
	return mirrorStatus(created), nil
}

// Validate returns why ti's spec cannot be acted on, or "". It is pure:
// the controller and render both call it before building the Job.
func Validate(ti *v1alpha1.TidbInitializer) string {
	switch {
	case ti.DecodeError != nil:
		return "unreadable spec: " + ti.DecodeError.Error()
	case ti.Spec.Cluster.Name == "":
		return "spec.cluster.name is required"
	}
	if errs := validation.IsDNS1123Label(names.Initializer(ti.Spec.Cluster.Name)); len(errs) > 0 {
		return fmt.Sprintf("the Job name %s is invalid (spec.cluster.name too long?): %v", names.Initializer(ti.Spec.Cluster.Name), errs)
	}
	return ""
}

// refusedJob returns why the API server would refuse job, or "": its pod
// template is checked as a pod (pkg/manager/precheck), the rules the API
// server applies to a Job's template, so that spec.resources,
// spec.tolerations, spec.nodeSelector or spec.serviceAccountName it
// would refuse is reported before the Job is created, not retried for
// ever as FailedCreate.
func refusedJob(job *batchv1.Job) string {
	tmpl := job.Spec.Template
	pod := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
	pod.Name, pod.Namespace = job.Name, job.Namespace
	if errs := precheck.Object(pod); len(errs) > 0 {
		return fmt.Sprintf("the Job %s would be refused: %v", job.Name, errs.ToAggregate())
	}
	return ""
}

// inputs returns ti's cluster once it and the Secret and ConfigMap ti
// names exist; otherwise a nil cluster with the Pending status saying what
// is missing, and the error to return.
func (c *Control) inputs(ctx context.Context, ti *v1alpha1.TidbInitializer) (*v1alpha1.TidbCluster, v1alpha1.TidbInitializerStatus, error) {
	ns := clusterNamespace(ti)
	tc, err := c.clusters.TidbClusters(ns).Get(ti.Spec.Cluster.Name)
	if apierrors.IsNotFound(err) {
		return nil, c.pending(ti, ReasonClusterNotFound, fmt.Sprintf("TidbCluster %s/%s not found", ns, ti.Spec.Cluster.Name)), nil
	}
	if err != nil {
		return nil, ti.Status, fmt.Errorf("get TidbCluster %s/%s: %w", ns, ti.Spec.Cluster.Name, err)
	}
	if tc.Spec.TiDB == nil {
		msg := fmt.Sprintf("TidbCluster %s/%s has no TiDB to initialize", ns, tc.Name)
		return nil, c.pending(ti, ReasonFailedValidation, msg), flow.Ignore(errors.New(msg))
	}
	reason, msg, err := c.checkReferences(ctx, ti)
	if err != nil {
		return nil, ti.Status, err
	}
	if reason != "" {
		return nil, c.pending(ti, reason, msg), flow.RequeueAfter(RecheckDelay, "%s", msg)
	}
	return tc, v1alpha1.TidbInitializerStatus{}, nil
}

// checkReferences reads passwordSecret and initSqlConfigMap (not cached:
// they are the user's) and returns the reason and message of the first
// that is missing or lacks the init-sql key; an error when one could not
// be read.
func (c *Control) checkReferences(ctx context.Context, ti *v1alpha1.TidbInitializer) (string, string, error) {
	if isSet(ti.Spec.PasswordSecret) {
		_, err := c.kube.CoreV1().Secrets(ti.Namespace).Get(ctx, *ti.Spec.PasswordSecret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ReasonSecretNotFound, fmt.Sprintf("passwordSecret %s/%s not found", ti.Namespace, *ti.Spec.PasswordSecret), nil
		}
		if err != nil {
			return "", "", fmt.Errorf("get Secret %s/%s: %w", ti.Namespace, *ti.Spec.PasswordSecret, err)
		}
	}
	if isSet(ti.Spec.InitSqlConfigMap) {
		cm, err := c.kube.CoreV1().ConfigMaps(ti.Namespace).Get(ctx, *ti.Spec.InitSqlConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ReasonConfigMapNotFound, fmt.Sprintf("initSqlConfigMap %s/%s not found", ti.Namespace, *ti.Spec.InitSqlConfigMap), nil
		}
		if err != nil {
			return "", "", fmt.Errorf("get ConfigMap %s/%s: %w", ti.Namespace, *ti.Spec.InitSqlConfigMap, err)
		}
		if _, ok := cm.Data[InitSQLKey]; !ok {
			return ReasonConfigMapNotFound, fmt.Sprintf("initSqlConfigMap %s/%s has no key %s", ti.Namespace, cm.Name, InitSQLKey), nil
		}
	}
	return "", "", nil
}

// pending records reason and message as a Warning (once per generation)
// and returns the Pending status with the Invalid condition saying it.
func (c *Control) pending(ti *v1alpha1.TidbInitializer, reason, message string) v1alpha1.TidbInitializerStatus {
	c.reports.warnOnce(ti, reason, message)
	return pendingStatus(&ti.Status, reason, message, c.now())
}

func (c *Control) now() metav1.Time { return metav1.NewTime(c.clock.Now().Truncate(time.Second)) }

// createJob creates job for ti with its event; one that already exists
// (a cache behind the API) is read back.
func (c *Control) createJob(ctx context.Context, ti *v1alpha1.TidbInitializer, job *batchv1.Job) (*batchv1.Job, error) {
	created, err := c.kube.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = c.kube.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err == nil && !metav1.IsControlledBy(created, ti) {
			return nil, fmt.Errorf("job %s/%s exists and is not TidbInitializer %s's", job.Namespace, job.Name, ti.Name)
		}
		if err == nil {
			return created, nil
		}
	}
	if err != nil {
		c.recorder.Eventf(ti, corev1.EventTypeWarning, ReasonFailedCreate,
			"create Job %s for TidbInitializer %s failed: %v", job.Name, ti.Name, err)
		return nil, fmt.Errorf("create Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	c.recorder.Eventf(ti, corev1.EventTypeNormal, ReasonSuccessfulCreate,
		"create Job %s for TidbInitializer %s successful", job.Name, ti.Name)
	return created, nil
}

// writeStatus writes st through the status subresource (guarded by ti's
// resourceVersion; a conflict is retried by the next sync).
func (c *Control) writeStatus(ctx context.Context, ti *v1alpha1.TidbInitializer, st v1alpha1.TidbInitializerStatus) error {
	out := ti.DeepCopy()
	out.Status = st
	if _, err := c.client.PingcapV1alpha1().TidbInitializers(ti.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of TidbInitializer %s/%s: %w", ti.Namespace, ti.Name, err)
	}
	return nil
}

// clusterNamespace is spec.cluster.namespace, or ti's own.
func clusterNamespace(ti *v1alpha1.TidbInitializer) string {
	if ti.Spec.Cluster.Namespace != "" {
		return ti.Spec.Cluster.Namespace
	}
	return ti.Namespace
}

// tidbHealthy reports whether some TiDB member of tc answered healthy: the
// Job reaches TiDB through its Service, which any healthy member serves.
func tidbHealthy(tc *v1alpha1.TidbCluster) bool {
	for _, m := range tc.Status.TiDB.Members {
		if m.Health {
			return true
		}
	}
	return false
}
