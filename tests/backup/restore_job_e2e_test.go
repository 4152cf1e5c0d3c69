//go:build integration

package backup

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// TestRestoreJobRestoresACompletedBackup: a Backup completed through its
// own Job (the real backup-manager and stand-in br writing into
// versitygw); a snapshot Restore of its data into cluster basic gets the
// controller's restore-<name> Job (exact args, Scheduled); that Job's
// command line, run as its pod would, makes the stand-in br read the
// backup's backupmeta back from S3, and the Restore ends Running then
// Complete with the backup's TSO as commitTs; the controller never creates
// a second Job.
func TestRestoreJobRestoresACompletedBackup(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	f.createBackup(t, "src", f.srv.provider("cluster-a/src"), nil)
	if code, out := f.runJob(t, f.waitJob(t, "backup-src")); code != 0 {
		t.Fatalf("Job backup-src's command exited %d:\n%s", code, out)
	}
	if b := f.backup(t, "src"); !condition.IsBackupComplete(b) || b.Status.CommitTs != defaultTS {
		t.Fatalf("source Backup: status %+v, want Complete at %s", b.Status, defaultTS)
	}

	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns},
		Spec: v1alpha1.RestoreSpec{StorageProvider: f.srv.provider("cluster-a/src"), BR: &v1alpha1.BRConfig{Cluster: "basic"}}}
	if _, err := f.client.PingcapV1alpha1().Restores(ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := f.waitJob(t, "restore-rt")
	if want := []string{"restore", "--namespace=" + ns, "--restoreName=rt", "--tikvVersion=v8.5.0"}; !slices.Equal(job.Spec.Template.Spec.Containers[0].Args, want) {
		t.Fatalf("Job restore-rt args %v, want %v", job.Spec.Template.Spec.Containers[0].Args, want)
	}
	f.waitRestore(t, "the controller records the Job (Scheduled)", condition.IsRestoreScheduled)
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("Job restore-rt's command exited %d:\n%s", code, out)
	}
	got := f.waitRestore(t, "the Restore is Complete", condition.IsRestoreComplete)
	if !condition.IsRestoreRunning(got) || got.Status.CommitTs != defaultTS || got.Status.Phase != v1alpha1.RestoreComplete || got.Status.TimeTaken == "" {
		t.Errorf("Restore status %+v, want Running then Complete with commitTs %s", got.Status, defaultTS)
	}
	args := f.brArgs(t)
	if last := args[len(args)-1]; !strings.HasPrefix(last, "restore full --pd=basic-pd."+ns+":2379 --storage=s3://backups/cluster-a/src?force-path-style=true") {
		t.Errorf("br restore args %q", last)
	}
	jobs, err := f.env.Kube.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: "tidb.pingcap.com/restore=rt"})
	if err != nil || len(jobs.Items) != 1 || jobs.Items[0].UID != job.UID {
		t.Errorf("restore Jobs %d (%v), want only the first", len(jobs.Items), err)
	}
}

// waitRestore waits until Restore rt satisfies cond and returns it.
func (f *jobFixture) waitRestore(t *testing.T, desc string, cond func(*v1alpha1.Restore) bool) *v1alpha1.Restore {
	t.Helper()
	var got *v1alpha1.Restore
	framework.WaitFor(t, f.env.Ctx, jobTimeout, desc, func(ctx context.Context) (bool, error) {
		r, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Get(ctx, "rt", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s conditions %+v", r.Status.Phase, r.Status.Conditions)
		got = r
		return cond(r), nil
	})
	return got
}

// TestPiTRRestoreJobRestoresToAPointInTime: a PiTR Restore (log backup
// storage, a full backup completed through its own Job, pitrRestoredTs)
// gets the controller's restore-<name> Job with --mode=pitr, and that Job's
// command line, run as its pod would, gives `br restore point` both
// storages and ends Complete at the restored TS. Its target "kvless" has no
// TiKV of its own, so there is no TiKV GC overlay to wait for (a cluster
// whose TiKV rolls needs the simulator: tests/e2e
// TestPiTRRestoreRunsTiKVWithGCOverlay covers the wait).
func TestPiTRRestoreJobRestoresToAPointInTime(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	framework.ApplyYAML(t, ctx, `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: kvless}
spec:
  version: v8.5.0
  paused: true
  pdAddresses: ["http://basic-pd:2379"]
  tidb: {replicas: 1}
`, ns)
	f.createBackup(t, "full", f.srv.provider("cluster-a/full"), nil)
	if code, out := f.runJob(t, f.waitJob(t, "backup-full")); code != 0 {
		t.Fatalf("Job backup-full's command exited %d:\n%s", code, out)
	}
	f.srv.put(t, ctx, "cluster-a/log/v1/global_checkpoint/task.ts", 18)
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns}, Spec: v1alpha1.RestoreSpec{
		Mode: v1alpha1.RestoreModePiTR, StorageProvider: f.srv.provider("cluster-a/log"), PitrRestoredTs: "449500000000000000",
		PitrFullBackupStorageProvider: f.srv.provider("cluster-a/full"), BR: &v1alpha1.BRConfig{Cluster: "kvless"}}}
	if _, err := f.client.PingcapV1alpha1().Restores(ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := f.waitJob(t, "restore-rt")
	if want := []string{"restore", "--namespace=" + ns, "--restoreName=rt", "--tikvVersion=v8.5.0", "--mode=pitr"}; !slices.Equal(job.Spec.Template.Spec.Containers[0].Args, want) {
		t.Fatalf("Job restore-rt args %v, want %v", job.Spec.Template.Spec.Containers[0].Args, want)
	}
	if code, out := f.runJob(t, job); code != 0 {
		t.Fatalf("Job restore-rt's command exited %d:\n%s", code, out)
	}
	got := f.waitRestore(t, "the PiTR Restore is Complete", condition.IsRestoreComplete)
	if got.Status.CommitTs != "449500000000000000" {
		t.Errorf("Restore status %+v, want Complete at the restored TS", got.Status)
	}
	args := strings.Fields(f.brArgs(t)[len(f.brArgs(t))-1])
	for _, want := range []string{"restore", "point", "--storage=s3://backups/cluster-a/log?force-path-style=true",
		"--full-backup-storage=s3://backups/cluster-a/full?force-path-style=true", "--restored-ts=449500000000000000"} {
		if !slices.Contains(args, want) {
			t.Errorf("br args %v lack %s", args, want)
		}
	}
}
