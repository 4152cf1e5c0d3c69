package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Finalizer keeps a Backup whose data must be cleaned (or whose log backup
// must be stopped) until that is done.
const Finalizer = "tidb.pingcap.com/backup-protection"

// waitDelay is how soon a sync that waits for something no event reports
// (a Job's pod, the backup-manager's write) looks again.
const waitDelay = 30 * time.Second

// writer is what the Backup and Restore steps read and write: the caches,
// the clients, the recorder and the clock, and the backup-manager image.
type writer struct {
	kube     kubernetes.Interface
	pc       versioned.Interface
	jobs     batchlisters.JobLister
	clusters listers.TidbClusterLister
	recorder record.EventRecorder
	clock    clock.PassiveClock
	image    string
}

func newWriter(deps *controller.Dependencies) *writer {
	return &writer{
		kube: deps.KubeClient, pc: deps.Clientset, jobs: deps.JobLister, clusters: deps.TiDBClusterLister,
		recorder: deps.Recorder, clock: deps.Clock, image: deps.CLIConfig.TiDBBackupManagerImage,
	}
}

func (w *writer) now() metav1.Time { return metav1.NewTime(w.clock.Now()) }

// job returns the cached Job ns/name, nil when there is none.
func (w *writer) job(ns, name string) (*batchv1.Job, error) {
	j, err := w.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get Job %s/%s: %w", ns, name, err)
	}
	return j, nil
}

// cluster returns the TidbCluster ns/name, nil when there is none.
func (w *writer) cluster(ns, name string) (*v1alpha1.TidbCluster, error) {
	tc, err := w.clusters.TidbClusters(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get TidbCluster %s/%s: %w", ns, name, err)
	}
	return tc, nil
}

// scratchVolumeIgnored names the scratch-PVC fields of a dumpling or
// Lightning Job that are set: this operator version gives those Jobs no
// scratch PVC (they use the remote storage directly), so the fields are
// not acted on, and the caller says so.
func scratchVolumeIgnored(storageClass *string, size string, attributesClass *string) []string {
	var out []string
	if storageClass != nil {
		out = append(out, "spec.storageClassName")
	}
	if size != "" {
		out = append(out, "spec.storageSize")
	}
	if attributesClass != nil {
		out = append(out, "spec.volumeAttributesClassName")
	}
	return out
}

// warnScratchVolume records a Warning Unsupported on obj naming the
// scratch-PVC fields set (scratchVolumeIgnored), when any is.
func (w *writer) warnScratchVolume(obj runtime.Object, fields []string) {
	if len(fields) > 0 {
		w.recorder.Eventf(obj, corev1.EventTypeWarning, ReasonUnsupported,
			"%s not acted on: this operator version gives dumpling and Lightning no scratch PVC (they read and write the remote storage directly)",
			strings.Join(fields, ", "))
	}
}

// clusterOrWait returns the TidbCluster br names (in ns when br names no
// namespace). A missing one is reported through markMissing (the kind's
// RetryFailed condition, which says whether it wrote it), with a Warning
// event on obj when that condition is first written, and waited for.
func (w *writer) clusterOrWait(obj runtime.Object, ns string, br *v1alpha1.BRConfig, what string,
	markMissing func(msg string) (bool, error)) (*v1alpha1.TidbCluster, error) {
	if br.ClusterNamespace != "" {
		ns = br.ClusterNamespace
	}
	tc, err := w.cluster(ns, br.Cluster)
	if tc != nil || err != nil {
		return tc, err
	}
	msg := fmt.Sprintf("%s %s/%s not found", what, ns, br.Cluster)
	wrote, err := markMissing(msg)
	if err != nil {
		return nil, err
	}
	if wrote {
		w.recorder.Event(obj, corev1.EventTypeWarning, ReasonClusterNotFound, msg+"; waiting for it")
	}
	return nil, flow.RequeueAfter(waitDelay, "%s", msg)
}

// createJob creates j; a Job of that name that already exists (a cache
// that has not seen our last create yet) counts as created.
func (w *writer) createJob(ctx context.Context, j *batchv1.Job) error {
	_, err := w.kube.BatchV1().Jobs(j.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create Job %s/%s: %w", j.Namespace, j.Name, err)
	}
	return nil
}

// deleteJob deletes j and its pods, only if the Job of that name is still
// j (its UID): a stale cache never deletes a newer Job.
func (w *writer) deleteJob(ctx context.Context, j *batchv1.Job) error {
	uid := j.UID
	err := w.kube.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Job %s/%s: %w", j.Namespace, j.Name, err)
	}
	return nil
}

// setBackupConditions writes conds into b's status through the status
// subresource when one changes it, and returns the object to continue with
// (b itself when nothing changed). A conflict (the backup-manager wrote in
// between) is returned and retried by the worker with a fresh read.
func (w *writer) setBackupConditions(ctx context.Context, b *v1alpha1.Backup, conds ...v1alpha1.BackupCondition) (*v1alpha1.Backup, bool, error) {
	return w.updateBackupStatus(ctx, b, func(st *v1alpha1.BackupStatus) bool {
		changed := false
		for _, c := range conds {
			changed = condition.SetBackupCondition(st, c, w.now()) || changed
		}
		return changed
	})
}

// updateBackupStatus applies mutate to a copy of b's status and writes it
// when mutate reports a change.
func (w *writer) updateBackupStatus(ctx context.Context, b *v1alpha1.Backup, mutate func(*v1alpha1.BackupStatus) bool) (*v1alpha1.Backup, bool, error) {
	out := b.DeepCopy()
	if !mutate(&out.Status) {
		return b, false, nil
	}
	got, err := w.pc.PingcapV1alpha1().Backups(b.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	if err != nil {
		return b, false, fmt.Errorf("update status of Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	return got, true, nil
}

// setRestoreConditions is setBackupConditions for a Restore.
func (w *writer) setRestoreConditions(ctx context.Context, r *v1alpha1.Restore, conds ...v1alpha1.RestoreCondition) (*v1alpha1.Restore, bool, error) {
	out := r.DeepCopy()
	changed := false
	for _, c := range conds {
		changed = condition.SetRestoreCondition(&out.Status, c, w.now()) || changed
	}
	if !changed {
		return r, false, nil
	}
	got, err := w.pc.PingcapV1alpha1().Restores(r.Namespace).UpdateStatus(ctx, out, metav1.UpdateOptions{})
	if err != nil {
		return r, false, fmt.Errorf("update status of Restore %s/%s: %w", r.Namespace, r.Name, err)
	}
	return got, true, nil
}

// setFinalizer adds (want) or removes Finalizer on b with a merge patch
// that carries b's resourceVersion, so a concurrent change conflicts and is
// retried; it returns the object to continue with.
func (w *writer) setFinalizer(ctx context.Context, b *v1alpha1.Backup, want bool) (*v1alpha1.Backup, error) {
	has := slices.Contains(b.Finalizers, Finalizer)
	if has == want {
		return b, nil
	}
	fins := slices.DeleteFunc(slices.Clone(b.Finalizers), func(f string) bool { return f == Finalizer })
	if want {
		fins = append(fins, Finalizer)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": fins, "resourceVersion": b.ResourceVersion}})
	if err != nil {
		return b, fmt.Errorf("finalizer patch: %w", err)
	}
	got, err := w.pc.PingcapV1alpha1().Backups(b.Namespace).Patch(ctx, b.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return b, fmt.Errorf("patch finalizers of Backup %s/%s: %w", b.Namespace, b.Name, err)
	}
	return got, nil
}

// backupCond is a True Backup condition.
func backupCond(t v1alpha1.BackupConditionType, reason, message string) v1alpha1.BackupCondition {
	return v1alpha1.BackupCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
}

// restoreCond is a True Restore condition.
func restoreCond(t v1alpha1.RestoreConditionType, reason, message string) v1alpha1.RestoreCondition {
	return v1alpha1.RestoreCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
}
