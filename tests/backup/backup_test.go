//go:build integration

package backup

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
)

// metaSize is the stand-in br's backupmeta size for its default BackupTS.
const (
	defaultTS = "450000000000000001"
	metaSize  = int64(len("backupmeta end-version=") + len(defaultTS))
)

// dataSize is the size of n stand-in data files (file i has 1000*(i+1) bytes).
func dataSize(n int) int64 { return int64(1000 * n * (n + 1) / 2) }

// TestBackupToS3CompletesAndCleanEmptiesOnlyItsPrefix runs a snapshot
// backup to the real S3 server with the Job's arguments: the Backup ends
// Complete with the size summed from the bucket, its path and BR's TSO, the
// objects are in the bucket, BR got the S3 options; then `clean` (small
// pages and batches) deletes exactly that prefix: a sibling prefix sharing
// its first letters and another prefix survive.
func TestBackupToS3CompletesAndCleanEmptiesOnlyItsPrefix(t *testing.T) {
	f := newFixture(t)
	ctx := f.env.Ctx
	srv := startS3(t, ctx)
	srv.put(t, ctx, "cluster-a/backup-10/keep.sst", 7)
	srv.put(t, ctx, "other/keep.sst", 9)
	f.createBackup(t, "backup-1", srv.provider("/cluster-a/backup-1/"), func(b *v1alpha1.Backup) {
		b.Spec.CleanPolicy = v1alpha1.CleanPolicyTypeDelete
		b.Spec.CleanOption = &v1alpha1.CleanOption{PageSize: 2, BatchConcurrency: 2}
		b.Spec.BR.Concurrency = ptrTo[uint32](4)
		b.Spec.BR.Options = []string{"--lastbackupts=0"}
	})

	code, out := f.runManager(t, []string{"STANDIN_BR_FILES=5"},
		"backup", "--namespace="+f.env.Namespace, "--backupName=backup-1", "--tikvVersion=v8.5.0")
	if code != 0 {
		t.Fatalf("backup-manager backup exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, `"Full Backup success summary"`) || !strings.Contains(out, "Full Backup <-----> 100.00%") {
		t.Errorf("backup-manager did not stream BR's output:\n%s", out)
	}
	b := f.backup(t, "backup-1")
	wantSize := dataSize(5) + metaSize
	if !condition.IsBackupComplete(b) || b.Status.Phase != v1alpha1.BackupComplete {
		t.Fatalf("backup is not Complete: %+v", b.Status)
	}
	if !condition.IsBackupRunning(b) {
		t.Errorf("Running was never recorded: %+v", b.Status.Conditions)
	}
	if b.Status.BackupPath != "s3://backups/cluster-a/backup-1" || b.Status.BackupSize != wantSize ||
		b.Status.BackupSizeReadable != "15.0 kB" || b.Status.CommitTs != defaultTS {
		t.Errorf("status = path %q size %d (%q) commitTs %q, want s3://backups/cluster-a/backup-1, %d (15.0 kB), %s",
			b.Status.BackupPath, b.Status.BackupSize, b.Status.BackupSizeReadable, b.Status.CommitTs, wantSize, defaultTS)
	}
	if b.Status.TimeStarted.IsZero() || b.Status.TimeCompleted.IsZero() || b.Status.TimeTaken == "" ||
		b.Status.TimeCompleted.Before(&b.Status.TimeStarted) {
		t.Errorf("times = started %v completed %v taken %q", b.Status.TimeStarted, b.Status.TimeCompleted, b.Status.TimeTaken)
	}
	objs := srv.list(t, ctx, "cluster-a/backup-1/")
	var sum int64
	for _, s := range objs {
		sum += s
	}
	if len(objs) != 6 || sum != wantSize || objs["cluster-a/backup-1/backupmeta"] != metaSize {
		t.Errorf("bucket holds %v (sum %d), want 5 data files and the backupmeta, %d bytes", objs, sum, wantSize)
	}
	args := strings.Fields(f.brArgs(t)[0])
	for _, want := range []string{"backup", "full", "--pd=basic-pd." + f.env.Namespace + ":2379",
		"--storage=s3://backups/cluster-a/backup-1?force-path-style=true", "--s3.region=us-east-1",
		"--s3.endpoint=" + srv.endpoint, "--s3.provider=minio", "--concurrency=4", "--lastbackupts=0"} {
		if !slices.Contains(args, want) {
			t.Errorf("br args %v lack %q", args, want)
		}
	}

	code, out = f.runManager(t, nil, "clean", "--namespace="+f.env.Namespace, "--backupName=backup-1")
	if code != 0 {
		t.Fatalf("backup-manager clean exited %d:\n%s", code, out)
	}
	if left := srv.list(t, ctx, "cluster-a/backup-1/"); len(left) != 0 {
		t.Errorf("clean left %v", left)
	}
	for _, k := range []string{"cluster-a/backup-10/keep.sst", "other/keep.sst"} {
		if _, ok := srv.list(t, ctx, k)[k]; !ok {
			t.Errorf("clean deleted %s, outside the backup's prefix", k)
		}
	}
	b = f.backup(t, "backup-1")
	if !condition.IsBackupClean(b) || condition.IsBackupCleanFailed(b) {
		t.Errorf("after clean: %+v", b.Status.Conditions)
	}
	if !condition.IsBackupComplete(b) {
		t.Errorf("clean dropped Complete: %+v", b.Status.Conditions)
	}
}

// TestFailingBRRecordsFailed: BR exits non-zero; the Backup ends Failed
// with the reason and BR's last lines, the process exits 1 (so the Job
// fails), and no Complete is recorded.
func TestFailingBRRecordsFailed(t *testing.T) {
	f := newFixture(t)
	srv := startS3(t, f.env.Ctx)
	f.createBackup(t, "doomed", srv.provider("cluster-a/doomed"), nil)
	code, out := f.runManager(t, []string{"STANDIN_BR_FAIL=connect to PD basic-pd:2379 refused"},
		"backup", "--namespace="+f.env.Namespace, "--backupName=doomed", "--tikvVersion=v8.5.0")
	if code != 1 {
		t.Fatalf("backup-manager exited %d, want 1:\n%s", code, out)
	}
	b := f.backup(t, "doomed")
	c := condition.GetBackupCondition(&b.Status, v1alpha1.BackupFailed)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "ToolFailed" ||
		!strings.Contains(c.Message, "connect to PD basic-pd:2379 refused") || b.Status.Phase != v1alpha1.BackupFailed {
		t.Fatalf("Failed condition = %+v (phase %s)", c, b.Status.Phase)
	}
	if condition.IsBackupComplete(b) || b.Status.BackupSize != 0 {
		t.Errorf("a failed backup reports completion: %+v", b.Status)
	}
}

// TestRestoreFromS3Completes restores the data a backup left: Running, then
// Complete with the backup's TSO read back from storage by the stand-in br.
func TestRestoreFromS3Completes(t *testing.T) {
	f := newFixture(t)
	srv := startS3(t, f.env.Ctx)
	f.createBackup(t, "source", srv.provider("cluster-a/source"), nil)
	if code, out := f.runManager(t, []string{"STANDIN_BR_TS=451111111111111111"},
		"backup", "--namespace="+f.env.Namespace, "--backupName=source"); code != 0 {
		t.Fatalf("backup exited %d:\n%s", code, out)
	}
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "restore-1", Namespace: f.env.Namespace},
		Spec: v1alpha1.RestoreSpec{StorageProvider: srv.provider("cluster-a/source"), BR: &v1alpha1.BRConfig{Cluster: "target"}}}
	if _, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Create(f.env.Ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out := f.runManager(t, nil, "restore", "--namespace="+f.env.Namespace, "--restoreName=restore-1", "--tikvVersion=v8.5.0")
	if code != 0 {
		t.Fatalf("restore exited %d:\n%s", code, out)
	}
	got, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Get(f.env.Ctx, "restore-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !condition.IsRestoreComplete(got) || !condition.IsRestoreRunning(got) || got.Status.CommitTs != "451111111111111111" ||
		got.Status.TimeTaken == "" {
		t.Errorf("restore status = %+v", got.Status)
	}
	args := f.brArgs(t)
	if last := args[len(args)-1]; !strings.HasPrefix(last, "restore full --pd=target-pd."+f.env.Namespace+":2379 --storage=s3://backups/cluster-a/source") {
		t.Errorf("br restore args = %q", last)
	}
}

// TestBackupToLocalVolume backs up to a local volume (the mount path is a
// temp dir here) and cleans it: the size is summed from the files, and
// clean leaves a sibling directory alone.
func TestBackupToLocalVolume(t *testing.T) {
	f := newFixture(t)
	mount := t.TempDir()
	sp := v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{Prefix: "cluster-a/local-1",
		VolumeMount: corev1.VolumeMount{Name: "nfs", MountPath: mount}}}
	f.createBackup(t, "local-1", sp, nil)
	sibling, err := storage.LocationOf(v1alpha1.StorageProvider{Local: &v1alpha1.LocalStorageProvider{Prefix: "cluster-a/local-10",
		VolumeMount: corev1.VolumeMount{MountPath: mount}}})
	if err != nil {
		t.Fatal(err)
	}
	putLocal(t, sibling, "keep.sst")
	if code, out := f.runManager(t, nil, "backup", "--namespace="+f.env.Namespace, "--backupName=local-1"); code != 0 {
		t.Fatalf("backup exited %d:\n%s", code, out)
	}
	b := f.backup(t, "local-1")
	if !condition.IsBackupComplete(b) || b.Status.BackupPath != "local://"+mount+"/cluster-a/local-1" ||
		b.Status.BackupSize != dataSize(3)+metaSize {
		t.Fatalf("status = %+v", b.Status)
	}
	if code, out := f.runManager(t, nil, "clean", "--namespace="+f.env.Namespace, "--backupName=local-1"); code != 0 {
		t.Fatalf("clean exited %d:\n%s", code, out)
	}
	loc, _ := storage.LocationOf(sp)
	if left := objectsUnder(t, f.env.Ctx, loc); len(left) != 0 {
		t.Errorf("clean left %v", left)
	}
	if kept := objectsUnder(t, f.env.Ctx, sibling); len(kept) != 1 {
		t.Errorf("clean touched the sibling prefix: %v", kept)
	}
	if !condition.IsBackupClean(f.backup(t, "local-1")) {
		t.Error("Clean not recorded")
	}
}

// putLocal writes one small object under loc.
func putLocal(t *testing.T, loc storage.Location, name string) {
	t.Helper()
	b, err := storage.Open(t.Context(), loc)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.Put(t.Context(), loc.ObjectPrefix()+name, []byte("keep")); err != nil {
		t.Fatal(err)
	}
}

// ptrTo returns a pointer to v.
func ptrTo[T any](v T) *T { return &v }

// TestLogBackupAndPiTRRestore starts a log backup (the stand-in br writes
// its checkpoint to S3) and restores to a point in time from it and a full
// backup: the log backup ends Complete with its start TSO, the PiTR restore
// Complete with the restored TS, and br got `restore point` with both
// storages.
func TestLogBackupAndPiTRRestore(t *testing.T) {
	f := newFixture(t)
	ctx := f.env.Ctx
	srv := startS3(t, ctx)
	f.createBackup(t, "full", srv.provider("cluster-a/full"), nil)
	f.createBackup(t, "log", srv.provider("cluster-a/log"), func(b *v1alpha1.Backup) {
		b.Spec.BackupMode = v1alpha1.BackupModeLog
		b.Spec.CommitTs = "449000000000000000"
	})
	if code, out := f.runManager(t, nil, "backup", "--namespace="+f.env.Namespace, "--backupName=full"); code != 0 {
		t.Fatalf("full backup exited %d:\n%s", code, out)
	}
	if code, out := f.runManager(t, nil, "backup", "--namespace="+f.env.Namespace, "--backupName=log",
		"--tikvVersion=v8.5.0", "--mode=log", "--subcommand=log-start"); code != 0 {
		t.Fatalf("log-start exited %d:\n%s", code, out)
	}
	lb := f.backup(t, "log")
	c := condition.GetBackupCondition(&lb.Status, v1alpha1.BackupComplete)
	if c == nil || c.Command != "log-start" || lb.Status.CommitTs != "449000000000000000" || lb.Status.BackupPath != "s3://backups/cluster-a/log" {
		t.Errorf("log backup status = %+v", lb.Status)
	}
	if objs := srv.list(t, ctx, "cluster-a/log/"); len(objs) != 1 {
		t.Errorf("log storage holds %v, want the task's checkpoint", objs)
	}

	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "pitr", Namespace: f.env.Namespace}, Spec: v1alpha1.RestoreSpec{
		Mode: v1alpha1.RestoreModePiTR, StorageProvider: srv.provider("cluster-a/log"), PitrRestoredTs: "449500000000000000",
		PitrFullBackupStorageProvider: srv.provider("cluster-a/full"), BR: &v1alpha1.BRConfig{Cluster: "target"}}}
	if _, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, out := f.runManager(t, nil, "restore", "--namespace="+f.env.Namespace, "--restoreName=pitr",
		"--tikvVersion=v8.5.0", "--mode=pitr"); code != 0 {
		t.Fatalf("pitr restore exited %d:\n%s", code, out)
	}
	got, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Get(ctx, "pitr", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !condition.IsRestoreComplete(got) || got.Status.CommitTs != "449500000000000000" {
		t.Errorf("pitr status = %+v", got.Status)
	}
	args := f.brArgs(t)
	last := strings.Fields(args[len(args)-1])
	for _, want := range []string{"restore", "point", "--storage=s3://backups/cluster-a/log?force-path-style=true",
		"--full-backup-storage=s3://backups/cluster-a/full?force-path-style=true", "--restored-ts=449500000000000000"} {
		if !slices.Contains(last, want) {
			t.Errorf("br args %v lack %q", last, want)
		}
	}
}

// TestExportAndImport runs a dumpling export (spec.br absent) to S3 and a
// TiDB Lightning import of it: the password comes from spec.from's Secret,
// the export ends Complete with the size of what dumpling wrote, the import
// Complete.
func TestExportAndImport(t *testing.T) {
	f := newFixture(t)
	ctx := f.env.Ctx
	srv := startS3(t, ctx)
	tidb := startTiDB(t, f, "10m0s")
	f.createBackup(t, "dump", srv.provider("cluster-a/dump"), func(b *v1alpha1.Backup) {
		b.Spec.BR = nil
		b.Spec.From = tidb.access(t)
	})
	code, out := f.runManager(t, nil, "export", "--namespace="+f.env.Namespace, "--backupName=dump")
	if code != 0 {
		t.Fatalf("export exited %d:\n%s", code, out)
	}
	// v1.6's GC life-time dance around the dump (72h by default).
	if !strings.Contains(out, "set tikv_gc_life_time of 127.0.0.1 to 72h") || tidb.gcLifeTime(t) != "10m0s" {
		t.Errorf("the export did not raise tikv_gc_life_time and put it back:\n%s", out)
	}
	b := f.backup(t, "dump")
	objs := srv.list(t, ctx, "cluster-a/dump/")
	var sum int64
	for _, s := range objs {
		sum += s
	}
	if !condition.IsBackupComplete(b) || len(objs) != 2 || b.Status.BackupSize != sum || b.Status.BackupPath != "s3://backups/cluster-a/dump" {
		t.Errorf("export status = %+v, bucket %v", b.Status, objs)
	}

	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "load", Namespace: f.env.Namespace}, Spec: v1alpha1.RestoreSpec{
		StorageProvider: srv.provider("cluster-a/dump"), To: &v1alpha1.TiDBAccessConfig{Host: "target-tidb", SecretName: "tidb-secret"}}}
	if _, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out = f.runManager(t, nil, "import", "--namespace="+f.env.Namespace, "--restoreName=load")
	if code != 0 {
		t.Fatalf("import exited %d:\n%s", code, out)
	}
	if strings.Contains(out, "=pw ") || !strings.Contains(out, "--tidb-password=******") {
		t.Errorf("the logged command line shows the password:\n%s", out)
	}
	got, err := f.client.PingcapV1alpha1().Restores(f.env.Namespace).Get(ctx, "load", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !condition.IsRestoreComplete(got) {
		t.Errorf("import status = %+v", got.Status)
	}
}
