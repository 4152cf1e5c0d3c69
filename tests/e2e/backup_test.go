//go:build integration

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const backupTimeout = 2 * time.Minute

// backupFixture is the namespace of a backup test: the backup-manager's
// RBAC applied, a TidbCluster to back up (never started: the Backup only
// reads its version), and the operator running.
type backupFixture struct {
	env *framework.Env
	pc  versioned.Interface
}

func newBackupFixture(t *testing.T) *backupFixture {
	t.Helper()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &backupFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config)}
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "manifests", "backup", "backup-rbac.yaml"), env.Namespace)
	framework.ApplyYAML(t, env.Ctx, `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: basic}
spec:
  version: v8.5.0
  paused: true
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv: {replicas: 1, requests: {storage: 1Gi}}
  tidb: {replicas: 1}
`, env.Namespace)
	operator.StartManager(t, env.Namespace, nil)
	return f
}

// createBackup creates Backup name to S3 with policy; cluster "" makes it invalid.
func (f *backupFixture) createBackup(t *testing.T, name, cluster string, policy v1alpha1.CleanPolicyType) {
	t.Helper()
	b := &v1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.BackupSpec{
			CleanPolicy: policy,
			BR:          &v1alpha1.BRConfig{Cluster: cluster},
			StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{
				Provider: "aws", Bucket: "backups", Prefix: name, SecretName: "s3-secret"}},
		},
	}
	if _, err := f.pc.PingcapV1alpha1().Backups(f.env.Namespace).Create(f.env.Ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Backup %s: %v", name, err)
	}
}

// waitBackup waits until Backup name satisfies cond.
func (f *backupFixture) waitBackup(t *testing.T, name, desc string, cond func(*v1alpha1.Backup) bool) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, backupTimeout, desc, func(ctx context.Context) (bool, error) {
		b, err := f.pc.PingcapV1alpha1().Backups(f.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s conditions %+v finalizers %v", b.Status.Phase, b.Status.Conditions, b.Finalizers)
		return cond(b), nil
	})
}

// waitJob waits until Job name exists and satisfies cond, and returns it.
func (f *backupFixture) waitJob(t *testing.T, name string, cond func(*batchv1.Job) bool) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	framework.WaitFor(t, f.env.Ctx, backupTimeout, "Job "+name, func(ctx context.Context) (bool, error) {
		j, err := f.env.Kube.BatchV1().Jobs(f.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "Job %s status %+v", name, j.Status)
		job = j
		return cond == nil || cond(j), nil
	})
	return job
}

// writeStatus writes Backup name's status as the backup-manager does:
// through the status subresource, re-reading on conflict.
func (f *backupFixture) writeStatus(t *testing.T, name string, mutate func(*v1alpha1.BackupStatus)) {
	t.Helper()
	bks := f.pc.PingcapV1alpha1().Backups(f.env.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b, err := bks.Get(f.env.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(&b.Status)
		_, err = bks.UpdateStatus(f.env.Ctx, b, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("write the status of Backup %s: %v", name, err)
	}
}

// complete writes what the backup-manager writes at the end of a run.
func (f *backupFixture) complete(t *testing.T, name string) {
	t.Helper()
	f.writeStatus(t, name, func(st *v1alpha1.BackupStatus) {
		now := metav1.Now()
		condition.SetBackupCondition(st, v1alpha1.BackupCondition{Type: v1alpha1.BackupComplete, Status: corev1.ConditionTrue}, now)
		st.BackupPath = "s3://backups/" + name
		st.BackupSize, st.BackupSizeReadable, st.CommitTs = 1024, "1 KiB", "450000000000000000"
		st.TimeCompleted = now
	})
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestBackupRunsCleansAndRetains runs Backups on the operator: an invalid
// Backup beside a valid one; the valid one's Job with the contract's
// command line completes (KWOK), the backup-manager's Complete is kept;
// deleting a cleanPolicy Delete Backup runs clean-<name> and the finalizer
// goes only once Clean is True; a Retain Backup goes without a clean Job.
func TestBackupRunsCleansAndRetains(t *testing.T) {
	t.Parallel()
	f := newBackupFixture(t)
	ns := f.env.Namespace

	// An invalid Backup first: it must not hold back the valid one.
	f.createBackup(t, "bad", "", v1alpha1.CleanPolicyTypeDelete)
	f.createBackup(t, "snap", "basic", v1alpha1.CleanPolicyTypeDelete)
	f.waitBackup(t, "bad", "bad is Invalid", condition.IsBackupInvalid)
	job := f.waitJob(t, "backup-snap", nil)
	want := []string{"backup", "--namespace=" + ns, "--backupName=snap", "--tikvVersion=v8.5.0"}
	pod := job.Spec.Template.Spec
	if !slices.Equal(pod.Containers[0].Args, want) || pod.ServiceAccountName != backup.DefaultServiceAccount ||
		len(pod.InitContainers) != 1 || pod.InitContainers[0].Image != "pingcap/br:v8.5.0" {
		t.Fatalf("Job backup-snap: args %v, serviceAccount %s, init %v", pod.Containers[0].Args, pod.ServiceAccountName, pod.InitContainers)
	}
	f.waitBackup(t, "snap", "snap is Scheduled with the finalizer", func(b *v1alpha1.Backup) bool {
		return condition.IsBackupScheduled(b) && slices.Contains(b.Finalizers, backup.Finalizer)
	})
	if bad, err := f.pc.PingcapV1alpha1().Backups(ns).Get(f.env.Ctx, "bad", metav1.GetOptions{}); err != nil || len(bad.Finalizers) != 0 {
		t.Fatalf("the invalid Backup got finalizers %v (%v)", bad.Finalizers, err)
	}
	if _, err := f.env.Kube.BatchV1().Jobs(ns).Get(f.env.Ctx, "backup-bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the invalid Backup has a Job (%v)", err)
	}

	// KWOK completes the Job's pod; the backup-manager would then have written Complete.
	f.waitJob(t, "backup-snap", jobComplete)
	f.complete(t, "snap")
	f.waitBackup(t, "snap", "snap is Complete", func(b *v1alpha1.Backup) bool {
		return b.Status.Phase == v1alpha1.BackupComplete && b.Status.BackupSize == 1024
	})

	// Delete: the clean Job runs; the finalizer holds until Clean.
	if err := f.pc.PingcapV1alpha1().Backups(ns).Delete(f.env.Ctx, "snap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clean := f.waitJob(t, "clean-snap", jobComplete)
	if want := []string{"clean", "--namespace=" + ns, "--backupName=snap"}; !slices.Equal(clean.Spec.Template.Spec.Containers[0].Args, want) {
		t.Fatalf("clean Job args %v, want %v", clean.Spec.Template.Spec.Containers[0].Args, want)
	}
	f.waitBackup(t, "snap", "snap waits for Clean after its clean Job completed", func(b *v1alpha1.Backup) bool {
		return b.DeletionTimestamp != nil && slices.Contains(b.Finalizers, backup.Finalizer)
	})
	f.writeStatus(t, "snap", func(st *v1alpha1.BackupStatus) {
		condition.SetBackupCondition(st, v1alpha1.BackupCondition{Type: v1alpha1.BackupClean, Status: corev1.ConditionTrue}, metav1.Now())
	})
	f.waitGone(t, "snap")

	// Retain: deleted at once, its data kept, no clean Job.
	f.createBackup(t, "keep", "basic", v1alpha1.CleanPolicyTypeRetain)
	f.waitJob(t, "backup-keep", nil)
	f.complete(t, "keep")
	f.waitBackup(t, "keep", "keep is Complete", func(b *v1alpha1.Backup) bool { return condition.IsBackupComplete(b) })
	if err := f.pc.PingcapV1alpha1().Backups(ns).Delete(f.env.Ctx, "keep", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitGone(t, "keep")
	if _, err := f.env.Kube.BatchV1().Jobs(ns).Get(f.env.Ctx, "clean-keep", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a Retain Backup got a clean Job (%v)", err)
	}
}

// waitGone waits until Backup name is deleted.
func (f *backupFixture) waitGone(t *testing.T, name string) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, backupTimeout, fmt.Sprintf("Backup %s is gone", name), func(ctx context.Context) (bool, error) {
		_, err := f.pc.PingcapV1alpha1().Backups(f.env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// failJob marks Job name Failed as the Job controller would (its pod never
// ran: the Backup names a ServiceAccount that does not exist).
func (f *backupFixture) failJob(t *testing.T, name string) {
	t.Helper()
	framework.FailJob(t, f.env, name)
}

// TestBackupRetriesAFailedJob fails the Job of a snapshot backup twice
// under backoffRetryPolicy {minRetryDuration 2s, maxRetryTimes 1}: the
// first failure is recorded and retried with a new Job after 2s, the second
// fails the Backup for good.
func TestBackupRetriesAFailedJob(t *testing.T) {
	t.Parallel()
	f := newBackupFixture(t)
	b := &v1alpha1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: "flaky"},
		Spec: v1alpha1.BackupSpec{
			ServiceAccount:     "no-such-account",
			BR:                 &v1alpha1.BRConfig{Cluster: "basic"},
			StorageProvider:    v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Provider: "aws", Bucket: "backups", Prefix: "flaky"}},
			BackoffRetryPolicy: v1alpha1.BackoffRetryPolicy{MinRetryDuration: "2s", MaxRetryTimes: 1, RetryTimeout: "10m"},
		},
	}
	if _, err := f.pc.PingcapV1alpha1().Backups(f.env.Namespace).Create(f.env.Ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := f.waitJob(t, "backup-flaky", nil)
	f.failJob(t, "backup-flaky")
	f.waitBackup(t, "flaky", "the failure is recorded and retried", func(b *v1alpha1.Backup) bool {
		r := b.Status.BackoffRetryStatus
		return len(r) == 1 && r[0].RetryNum == 1 && r[0].RealRetryAt != nil && !condition.IsBackupFailed(b)
	})
	second := f.waitJob(t, "backup-flaky", func(j *batchv1.Job) bool { return j.UID != first.UID })
	if second.Annotations[backup.AnnRetryNum] != "1" {
		t.Fatalf("the retry's Job is annotated %v", second.Annotations)
	}
	rec := f.getBackup(t, "flaky").Status.BackoffRetryStatus[0]
	if d := rec.ExpectedRetryAt.Sub(rec.DetectFailedAt.Time); d != 2*time.Second {
		t.Fatalf("retry expected %s after the failure, want 2s", d)
	}
	f.failJob(t, "backup-flaky")
	f.waitBackup(t, "flaky", "flaky is Failed after its one retry", func(b *v1alpha1.Backup) bool {
		c := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed)
		return b.Status.Phase == v1alpha1.BackupFailed && c != nil && c.Reason == backup.ReasonRetryExhausted
	})
}

func (f *backupFixture) getBackup(t *testing.T, name string) *v1alpha1.Backup {
	t.Helper()
	b, err := f.pc.PingcapV1alpha1().Backups(f.env.Namespace).Get(f.env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
