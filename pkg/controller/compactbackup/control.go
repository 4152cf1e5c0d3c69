package compactbackup

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/compactstatus"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Event reasons of the controller (v1.6's, but for the Job failure, whose
// v1.6 reason is a sentence).
const (
	ReasonJobCreated      = "SuccessfulCreate"
	ReasonJobCreateFailed = "FailedCreate"
	ReasonJobFailed       = "CompactJobFailed"
)

// Retry bounds of a Job that must be created again (v1.6's).
const (
	retryBase = 10 * time.Second
	retryCap  = 6 * time.Minute
)

// control runs a valid CompactBackup.
type control struct {
	kube     kubernetes.Interface
	pc       versioned.Interface
	jobs     batchlisters.JobLister
	clusters listers.TidbClusterLister
	recorder record.EventRecorder
	clock    clock.PassiveClock
	image    string
}

func newControl(deps *controller.Dependencies) *control {
	return &control{kube: deps.KubeClient, pc: deps.Clientset, jobs: deps.JobLister, clusters: deps.TiDBClusterLister,
		recorder: deps.Recorder, clock: deps.Clock, image: deps.CLIConfig.TiDBBackupManagerImage}
}

func (c *control) now() metav1.Time { return metav1.NewTime(c.clock.Now()) }

// sync is v1.6's order: a new CompactBackup is Scheduled; a Complete or
// Failed one is done; a Failed Job makes it Failed; a running or complete
// Job is left to its backup-manager; a missing Job is created, after the
// backoff of earlier failures, unless they exhausted maxRetryTimes. A write
// error is returned (retried); a backoff wait is a RequeueAfter.
func (c *control) sync(ctx context.Context, cb *v1alpha1.CompactBackup) error {
	switch cb.Status.State {
	case "":
		// The write's event brings the next sync.
		return c.write(ctx, cb, compactstatus.Update{State: v1alpha1.CompactScheduled})
	case v1alpha1.CompactComplete, v1alpha1.CompactFailed:
		return nil
	}
	job, err := c.jobs.Jobs(cb.Namespace).Get(cb.Name)
	switch {
	case apierrors.IsNotFound(err):
		return c.createWhenDue(ctx, cb)
	case err != nil:
		return fmt.Errorf("get Job %s/%s: %w", cb.Namespace, cb.Name, err)
	case !metav1.IsControlledBy(job, cb):
		return flow.Ignore(fmt.Errorf("the Job %s/%s exists and is not owned by CompactBackup %s", cb.Namespace, cb.Name, cb.Name))
	}
	if failed := jobCondition(job, batchv1.JobFailed); failed != nil {
		return c.fail(ctx, cb, "the compaction Job failed: "+failed.Reason+": "+failed.Message)
	}
	return nil
}

// createWhenDue creates cb's Job unless the retries are exhausted (state
// Failed) or the last failure's backoff has not passed (a RequeueAfter).
func (c *control) createWhenDue(ctx context.Context, cb *v1alpha1.CompactBackup) error {
	records := cb.Status.BackoffRetryStatus
	if n := len(records); n > 0 {
		last := records[n-1]
		if last.RetryNum > int(cb.Spec.MaxRetryTimes) {
			return c.fail(ctx, cb, "create job failed, reached max retry times")
		}
		if wait := last.DetectFailedAt.Add(backoff(n)).Sub(c.clock.Now()); wait > 0 {
			return flow.RequeueAfter(wait, "CompactBackup %s/%s: retry %d is due in %s", cb.Namespace, cb.Name, n, wait.Round(time.Second))
		}
	}
	return c.createJob(ctx, cb)
}

// backoff is how long after the last of n failures the Job is created
// again: none for the first two, then 10s·2^(n−1), at most 6 minutes.
func backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	if n > 7 {
		return retryCap
	}
	return min(retryBase<<(n-1), retryCap)
}

// createJob creates cb's Job against the TidbCluster br names (for TiKV's
// version) and marks it Prepare; a failure (the cluster missing, the
// create refused) is RetryFailed with a retry record, and returned.
func (c *control) createJob(ctx context.Context, cb *v1alpha1.CompactBackup) error {
	ns := cb.Spec.BR.ClusterNamespace
	if ns == "" {
		ns = cb.Namespace
	}
	tc, err := c.clusters.TidbClusters(ns).Get(cb.Spec.BR.Cluster)
	if err != nil {
		err = fmt.Errorf("failed to fetch tidbcluster %s/%s: %w", ns, cb.Spec.BR.Cluster, err)
	} else {
		job := newCompactJob(cb, tc, c.image)
		_, err = c.kube.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) { // a cache that has not seen our last create yet
			err = nil
		}
	}
	if err != nil {
		c.recorder.Eventf(cb, corev1.EventTypeWarning, ReasonJobCreateFailed, "create job %s/%s failed: %v", cb.Namespace, cb.Name, err)
		werr := c.write(ctx, cb, compactstatus.Update{State: v1alpha1.CompactRetryFailed, Message: err.Error(),
			Retry: compactstatus.NextRetry(&cb.Status, c.now(), err.Error())})
		return errors.Join(fmt.Errorf("CompactBackup %s/%s: %w", cb.Namespace, cb.Name, err), werr)
	}
	c.recorder.Eventf(cb, corev1.EventTypeNormal, ReasonJobCreated, "create job %s/%s for cluster %s successful", cb.Namespace, cb.Name, InstanceLabel)
	klog.FromContext(ctx).V(2).Info("compaction Job created", "compactBackup", klog.KObj(cb))
	return c.write(ctx, cb, compactstatus.Update{State: v1alpha1.CompactPrepare})
}

// fail marks cb Failed with a Warning; the message the backup-manager
// wrote is kept, why is used only when there is none.
func (c *control) fail(ctx context.Context, cb *v1alpha1.CompactBackup, why string) error {
	c.recorder.Event(cb, corev1.EventTypeWarning, ReasonJobFailed, why)
	u := compactstatus.Update{State: v1alpha1.CompactFailed}
	if cb.Status.Message == "" {
		u.Message = why
	}
	return c.write(ctx, cb, u)
}

// write applies u to cb's live status.
func (c *control) write(ctx context.Context, cb *v1alpha1.CompactBackup, u compactstatus.Update) error {
	if _, err := compactstatus.Write(ctx, c.pc, cb.Namespace, cb.Name, u); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// deleteJob deletes the Job of the CompactBackup ns/name, which is gone:
// the garbage collector would too, through the owner reference, but only
// once it has discovered the CompactBackup resource (up to half a minute
// after the CRD is installed). Only a Job a CompactBackup controls is
// deleted, and only that very Job (its UID), with its pods.
func (c *control) deleteJob(ctx context.Context, ns, name string) error {
	job, err := c.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Job %s/%s: %w", ns, name, err)
	}
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != Kind || ref.Name != name {
		return nil
	}
	uid := job.UID
	err = c.kube.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Job %s/%s of a deleted CompactBackup: %w", ns, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Job of a deleted CompactBackup deleted", "job", klog.KObj(job))
	return nil
}

// jobCondition is j's True condition of type t, nil when it has none.
func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}
