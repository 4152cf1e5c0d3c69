package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/pkg/backup/storage"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
)

var clock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// script writes an executable shell script standing in for a tool. The
// executable is written by a child process (install): a file this process
// held open for writing could be inherited by a parallel test's fork and
// make its exec fail with "text file busy".
func script(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src, p := filepath.Join(dir, "tool.src"), filepath.Join(dir, "tool")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("install", "-m", "0755", src, p).CombinedOutput(); err != nil {
		t.Fatalf("install %s: %v: %s", p, err, out)
	}
	return p
}

// newTestManager returns a manager over a fake clientset holding objs and a
// fake bucket, its clock advancing a second a call.
func newTestManager(t *testing.T, bucket *fakeBucket, tool string, objs ...runtime.Object) (*Manager, *bytes.Buffer) {
	t.Helper()
	now := clock
	out := &bytes.Buffer{}
	m := &Manager{
		Client: fake.NewSimpleClientset(objs...),
		Kube:   kubefake.NewSimpleClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: "ns"}, Data: map[string][]byte{"password": []byte("secret")}}),
		Opts:   Options{Namespace: "ns", Name: "b1", BRPath: tool, DumplingPath: tool, LightningPath: tool},
		Out:    out,
		OpenBucket: func(context.Context, storage.Location) (storage.Bucket, error) {
			return bucket, nil
		},
		Now: func() time.Time { now = now.Add(time.Second); return now },
	}
	return m, out
}

func s3Backup() *v1alpha1.Backup {
	return &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: "ns"}, Spec: v1alpha1.BackupSpec{
		StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Bucket: "bk", Prefix: "p"}},
		BR:              &v1alpha1.BRConfig{Cluster: "basic"}}}
}

func getBackup(t *testing.T, m *Manager) *v1alpha1.Backup {
	t.Helper()
	b, err := m.Client.PingcapV1alpha1().Backups("ns").Get(t.Context(), "b1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const summaryLine = `[2026/01/01 00:00:00.000 +00:00] [INFO] [collector.go:77] ["Full Backup success summary"] [total-kv=3] [total-kv-size=3kB] [Size=3000] [BackupTS=445566]`

func TestBackupCompletes(t *testing.T) {
	t.Parallel()
	bucket := newFakeBucket(map[string]int64{"p/backupmeta": 100, "p/a.sst": 2000, "p1/other": 5})
	tool := script(t, "echo 'Full Backup <--> 100.00%'; echo '"+summaryLine+"'")
	m, out := newTestManager(t, bucket, tool, s3Backup())
	if err := m.Backup(t.Context()); err != nil {
		t.Fatalf("Backup: %v\n%s", err, out)
	}
	b := getBackup(t, m)
	if !condition.IsBackupComplete(b) || !condition.IsBackupRunning(b) || b.Status.Phase != v1alpha1.BackupComplete {
		t.Fatalf("conditions = %+v", b.Status.Conditions)
	}
	if b.Status.BackupPath != "s3://bk/p" || b.Status.BackupSize != 2100 || b.Status.BackupSizeReadable != "2.1 kB" ||
		b.Status.CommitTs != "445566" || b.Status.TimeTaken != "2s" || !b.Status.TimeStarted.Time.Equal(clock.Add(time.Second)) {
		t.Errorf("status = %+v", b.Status)
	}
	if !strings.Contains(out.String(), "Full Backup <--> 100.00%") {
		t.Errorf("output not streamed:\n%s", out)
	}
	// A finished backup is left alone: the tool is not run again.
	m.Opts.BRPath = script(t, "exit 3")
	if err := m.Backup(t.Context()); err != nil {
		t.Errorf("re-running a Complete backup: %v", err)
	}
}

func TestBackupFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, reason, message string
		backup                      func(*v1alpha1.Backup)
	}{
		{name: "tool exits non-zero", body: "echo 'connecting to PD'; echo 'error: PD unreachable' >&2; exit 1",
			reason: ReasonToolFailed, message: "error: PD unreachable"},
		{name: "no summary", body: "echo 'all done'", reason: ReasonNoSummary, message: "all done"},
		{name: "malformed summary", body: `echo '["Full Backup success summary"] [BackupTS=abc]'`, reason: ReasonNoSummary},
		{name: "failed summary", body: `echo '["Full Backup failed summary"] [BackupTS=1]'`, reason: ReasonNoSummary},
		{name: "no storage", body: "true", reason: ReasonInvalidStorage,
			backup: func(b *v1alpha1.Backup) { b.Spec.StorageProvider = v1alpha1.StorageProvider{} }},
		{name: "missing tool", reason: ReasonToolFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := s3Backup()
			if tc.backup != nil {
				tc.backup(b)
			}
			tool := filepath.Join(t.TempDir(), "absent")
			if tc.body != "" {
				tool = script(t, tc.body)
			}
			m, out := newTestManager(t, newFakeBucket(map[string]int64{}), tool, b)
			err := m.Backup(t.Context())
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("Backup = %v, want ErrFailed\n%s", err, out)
			}
			got := getBackup(t, m)
			c := condition.GetBackupCondition(&got.Status, v1alpha1.BackupFailed)
			if c == nil || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) || condition.IsBackupComplete(got) {
				t.Errorf("Failed = %+v, want reason %s with %q", c, tc.reason, tc.message)
			}
		})
	}
}

func TestLogBackupCommands(t *testing.T) {
	t.Parallel()
	b := s3Backup()
	b.Spec.BackupMode = v1alpha1.BackupModeLog
	b.Spec.CommitTs = "77"
	b.Spec.LogTruncateUntil = "88"
	m, out := newTestManager(t, newFakeBucket(map[string]int64{}), script(t, `echo "$@"`), b)
	m.Opts.Mode = "log"
	for _, sub := range []string{"log-start", "log-truncate", "log-stop"} {
		m.Opts.Subcommand = sub
		if err := m.Backup(t.Context()); err != nil {
			t.Fatalf("%s: %v\n%s", sub, err, out)
		}
	}
	got := getBackup(t, m)
	if got.Status.CommitTs != "77" || got.Status.LogSuccessTruncateUntil != "88" || got.Status.Phase != v1alpha1.BackupStopped {
		t.Errorf("status = %+v", got.Status)
	}
	if !strings.Contains(out.String(), "log stop --task-name=b1 --pd=basic-pd.ns:2379") {
		t.Errorf("log stop not run:\n%s", out)
	}
}

func TestCleanWritesConditions(t *testing.T) {
	t.Parallel()
	bucket := newFakeBucket(map[string]int64{"p/a": 1, "p/b": 2, "p10/c": 3})
	m, _ := newTestManager(t, bucket, "", s3Backup())
	if err := m.Clean(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(bucket.objects) != 1 || bucket.objects["p10/c"] != 3 {
		t.Errorf("left %v", bucket.objects)
	}
	if b := getBackup(t, m); !condition.IsBackupClean(b) || b.Status.Phase != v1alpha1.BackupClean {
		t.Errorf("status = %+v", b.Status)
	}

	whole := s3Backup()
	whole.Spec.S3.Prefix = ""
	m, _ = newTestManager(t, newFakeBucket(map[string]int64{"x": 1}), "", whole)
	if err := m.Clean(t.Context()); !errors.Is(err, ErrFailed) {
		t.Fatalf("cleaning a whole bucket = %v, want ErrFailed", err)
	}
	b := getBackup(t, m)
	c := condition.GetBackupCondition(&b.Status, v1alpha1.BackupCleanFailed)
	if c == nil || c.Reason != ReasonCleanFailed || !strings.Contains(c.Message, "no prefix") || condition.IsBackupClean(b) {
		t.Errorf("CleanFailed = %+v", c)
	}
}

func TestRestoreAndImport(t *testing.T) {
	t.Parallel()
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: "ns"}, Spec: v1alpha1.RestoreSpec{
		StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Bucket: "bk", Prefix: "p"}},
		BR:              &v1alpha1.BRConfig{Cluster: "basic"}}}
	m, out := newTestManager(t, nil, script(t, `echo '["Full Restore success summary"] [BackupTS=99]'`), r)
	if err := m.Restore(t.Context()); err != nil {
		t.Fatalf("Restore: %v\n%s", err, out)
	}
	got, _ := m.Client.PingcapV1alpha1().Restores("ns").Get(t.Context(), "b1", metav1.GetOptions{})
	if !condition.IsRestoreComplete(got) || got.Status.CommitTs != "99" || got.Status.TimeTaken != "2s" {
		t.Errorf("restore status = %+v", got.Status)
	}

	imp := r.DeepCopy()
	imp.Spec.BR = nil
	imp.Spec.To = &v1alpha1.TiDBAccessConfig{Host: "h", SecretName: "pw"}
	m, out = newTestManager(t, nil, script(t, `echo "$@"; exit 2`), imp)
	if err := m.Import(t.Context()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Import = %v, want ErrFailed", err)
	}
	if !strings.Contains(out.String(), "--tidb-password=secret") || !strings.Contains(out.String(), "--tidb-password=******") {
		t.Errorf("lightning did not get the password, or the log did not redact it:\n%s", out)
	}
	got, _ = m.Client.PingcapV1alpha1().Restores("ns").Get(t.Context(), "b1", metav1.GetOptions{})
	if !condition.IsRestoreFailed(got) {
		t.Errorf("import status = %+v", got.Status)
	}
}

func TestExportCompletes(t *testing.T) {
	t.Parallel()
	b := s3Backup()
	b.Spec.BR = nil
	b.Spec.From = useTiDB(t, "10m0s")
	bucket := newFakeBucket(map[string]int64{"p/db.sql": 1234})
	tool, seen := gcTool(t, `echo "$@"`)
	m, out := newTestManager(t, bucket, tool, b)
	if err := m.Export(t.Context()); err != nil {
		t.Fatalf("Export: %v\n%s", err, out)
	}
	got := getBackup(t, m)
	if !condition.IsBackupComplete(got) || got.Status.BackupSize != 1234 || got.Status.BackupPath != "s3://bk/p" {
		t.Errorf("status = %+v", got.Status)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("--host=127.0.0.1 --port=%d --user=bk --password=secret --output=s3://bk/p", b.Spec.From.Port)) {
		t.Errorf("dumpling args:\n%s", out)
	}
	// v1.6's GC life-time dance around the dump: 72h by default.
	if s, now := readSeen(t, seen), gcNow(t); s != DefaultTiKVGCLifeTime || now != "10m0s" {
		t.Errorf("tikv_gc_life_time while dumpling ran %q, after %q", s, now)
	}

	b.Spec.From.SecretName = "absent"
	m, _ = newTestManager(t, bucket, script(t, "true"), b)
	if err := m.Export(t.Context()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Export without its secret = %v", err)
	}
	if c := condition.GetBackupCondition(&getBackup(t, m).Status, v1alpha1.BackupFailed); c == nil || c.Reason != ReasonReadCredentials {
		t.Errorf("Failed = %+v", c)
	}
}
