//go:build integration

package backup

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/controller/backup"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

const downSelector = "app.kubernetes.io/component=backup,tidb.pingcap.com/backup=down"

// noPodAccount is a ServiceAccount that does not exist: the Job controller
// creates no pod, so KWOK never completes the Job behind the test's back
// (the test runs the Job's command itself, as its pod would).
const noPodAccount = "no-such-account"

// TestS3DownMidBackupFails: versitygw is stopped (by its PID) while the
// backup Job's br is under way; with a policy that allows no retry
// (retryTimeout below minRetryDuration) the backup-manager exits non-zero
// without a panic, the Backup is Failed naming the storage endpoint, the
// operator writes a Warning event once the Job fails, and no second Job runs.
func TestS3DownMidBackupFails(t *testing.T) {
	f := newJobFixture(t)
	jobs := f.watchJobs(t, downSelector)
	f.createBackup(t, "down", f.srv.provider("cluster-a/down"), func(b *v1alpha1.Backup) {
		b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "300s", MaxRetryTimes: 2, RetryTimeout: "1s"}
		b.Spec.ServiceAccount = noPodAccount
	})
	job := f.waitJob(t, "backup-down")
	f.failMidBackup(t, job)

	framework.FailJob(t, f.env, job.Name)
	f.waitWarning(t, "down")
	f.waitBackup(t, "down", "the Backup stays Failed after the Job failed", func(b *v1alpha1.Backup) bool {
		if b == nil || !condition.IsBackupFailed(b) || len(b.Status.BackoffRetryStatus) != 0 {
			return false
		}
		fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed)
		return strings.Contains(fc.Message, "not retried") && strings.Contains(fc.Message, f.srv.addr)
	})
	if uids := jobs(); len(uids) != 1 || uids[0] != job.UID {
		t.Errorf("backup Jobs %v, want only %s", uids, job.UID)
	}
}

// TestS3DownMidBackupRetries: the same fault under backoffRetryPolicy
// (minRetryDuration 1s, one retry); versitygw is started again on the same
// port and data directory, the retry's Job (retry 1) runs once and the
// Backup is Complete with its data in S3 — one Job per attempt, two in all.
func TestS3DownMidBackupRetries(t *testing.T) {
	f := newJobFixture(t)
	ctx := f.env.Ctx
	jobs := f.watchJobs(t, downSelector)
	f.createBackup(t, "down", f.srv.provider("cluster-a/down"), func(b *v1alpha1.Backup) {
		b.Spec.BackoffRetryPolicy = v1alpha1.BackoffRetryPolicy{MinRetryDuration: "1s", MaxRetryTimes: 1, RetryTimeout: "10m"}
		b.Spec.ServiceAccount = noPodAccount
	})
	first := f.waitJob(t, "backup-down")
	f.failMidBackup(t, first)
	f.srv.start(t)
	framework.FailJob(t, f.env, first.Name)

	var retry = first
	framework.WaitFor(t, ctx, jobTimeout, "the retry's Job", func(ctx context.Context) (bool, error) {
		j, err := f.env.Kube.BatchV1().Jobs(f.env.Namespace).Get(ctx, "backup-down", metav1.GetOptions{})
		if err != nil || j.UID == first.UID {
			return false, nil
		}
		retry = j
		return true, nil
	})
	if got := retry.Annotations[backup.AnnRetryNum]; got != "1" {
		t.Fatalf("the retry's Job carries retry %q, want 1", got)
	}
	f.extraEnv = nil
	if code, out := f.runJob(t, retry); code != 0 {
		t.Fatalf("the retry's Job exited %d:\n%s", code, out)
	}
	b := f.backup(t, "down")
	objs := f.srv.list(t, ctx, "cluster-a/down/")
	var sum int64
	for _, s := range objs {
		sum += s
	}
	if !condition.IsBackupComplete(b) || condition.IsBackupFailed(b) || len(objs) != 4 || b.Status.BackupSize != sum ||
		b.Status.BackupSize != dataSize(3)+metaSize {
		t.Fatalf("after the retry: status %+v; bucket %v (sum %d), want Complete with 3 data files and the backupmeta", b.Status, objs, sum)
	}
	if uids := jobs(); len(uids) != 2 || uids[0] != first.UID || uids[1] != retry.UID {
		t.Errorf("backup Jobs %v, want the first %s and the retry %s", uids, first.UID, retry.UID)
	}
}

// failMidBackup runs job's command with the stand-in br held after its first
// data file, stops versitygw there, lets br go on and checks the
// backup-manager failed cleanly: non-zero exit, no panic, Failed naming
// the storage endpoint and the refused connection.
func (f *jobFixture) failMidBackup(t *testing.T, job *batchv1.Job) {
	t.Helper()
	hold := newHold(t)
	f.extraEnv = []string{hold.env()}
	done := f.runJobAsync(t, job)
	hold.waitStarted(t, f.env.Ctx)
	if b := f.backup(t, "down"); !condition.IsBackupTrue(b, v1alpha1.BackupRunning) {
		t.Fatalf("the held backup is not Running: %+v", b.Status.Conditions)
	}
	f.srv.stop()
	hold.release(t)
	res := <-done
	if res.code == 0 || strings.Contains(res.out, "panic:") {
		t.Fatalf("the backup-manager with S3 down exited %d:\n%s", res.code, res.out)
	}
	b := f.backup(t, "down")
	fc := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed)
	if !condition.IsBackupFailed(b) || condition.IsBackupComplete(b) || fc == nil || fc.Reason == "" ||
		!strings.Contains(fc.Message, f.srv.addr) || !strings.Contains(fc.Message, "connection refused") {
		t.Fatalf("after S3 went down: conditions %+v, want Failed with a reason and a message naming %s", b.Status.Conditions, f.srv.addr)
	}
	t.Logf("Failed %s: %s", fc.Reason, fc.Message)
}

// waitWarning waits for a Warning event of the operator on Backup name.
func (f *jobFixture) waitWarning(t *testing.T, name string) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, jobTimeout, "a Warning event on Backup "+name, func(ctx context.Context) (bool, error) {
		evs, err := f.env.Kube.CoreV1().Events(f.env.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=" + name + ",type=" + corev1.EventTypeWarning})
		if err != nil {
			return false, err
		}
		return len(evs.Items) > 0, nil
	})
}
