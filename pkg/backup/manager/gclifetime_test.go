package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

// tidb is a real MySQL-protocol server standing in for TiDB, with TiDB's
// mysql.tidb table; tidbMu serialises the tests that use its GC life time.
var (
	tidb   *sqlserver.Server
	tidbMu sync.Mutex
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	var err error
	if tidb, err = sqlserver.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = tidb.Stop() }()
	db, err := tidb.Admin()
	if err == nil {
		_, err = db.Exec("CREATE TABLE mysql.tidb (VARIABLE_NAME VARCHAR(64) PRIMARY KEY, VARIABLE_VALUE VARCHAR(1024), COMMENT VARCHAR(1024));" +
			"CREATE USER 'bk'@'%' IDENTIFIED BY 'secret'; GRANT ALL PRIVILEGES ON *.* TO 'bk'@'%'")
		_ = db.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// useTiDB takes the stand-in TiDB for the test with tikv_gc_life_time set
// to gc, and returns its login for spec.from / spec.to (user bk, whose
// password is newTestManager's Secret "pw").
func useTiDB(t *testing.T, gc string) *v1alpha1.TiDBAccessConfig {
	t.Helper()
	tidbMu.Lock()
	t.Cleanup(tidbMu.Unlock)
	setGC(t, gc)
	host, port, err := net.SplitHostPort(tidb.Addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return &v1alpha1.TiDBAccessConfig{Host: host, Port: int32(p), User: "bk", SecretName: "pw"}
}

func setGC(t *testing.T, gc string) {
	t.Helper()
	db, err := tidb.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec("REPLACE INTO mysql.tidb VALUES ('tikv_gc_life_time', ?, 'GC life time')", gc); err != nil {
		t.Fatal(err)
	}
}

func gcNow(t *testing.T) string {
	t.Helper()
	db, err := tidb.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var v string
	if err := db.QueryRow("SELECT VARIABLE_VALUE FROM mysql.tidb WHERE VARIABLE_NAME = 'tikv_gc_life_time'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// gcTool is a tool that records the GC life time while it runs into the
// returned file, then prints body's output.
func gcTool(t *testing.T, body string) (tool, seen string) {
	t.Helper()
	seen = filepath.Join(t.TempDir(), "seen")
	tool = script(t, "mariadb --no-defaults -S "+tidb.Socket+" -u root -N -e "+
		`"SELECT VARIABLE_VALUE FROM mysql.tidb WHERE VARIABLE_NAME='tikv_gc_life_time'" > `+seen+" || exit 9\n"+body)
	return tool, seen
}

func readSeen(t *testing.T, seen string) string {
	t.Helper()
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the tool did not record the GC life time: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// TestBackupGCLifeTimeDance: a snapshot backup with spec.from raises a
// shorter tikv_gc_life_time to spec.tikvGCLifeTime (72h when unset) while
// BR runs and puts it back after, also when BR fails; a longer one is left
// alone; a bad duration or an unreachable TiDB fail the backup with v1.6's
// reasons before BR runs.
func TestBackupGCLifeTimeDance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, old, want, body, during, reason string
		unset                                 bool
	}{
		{name: "raised to spec", old: "10m0s", want: "96h", body: "echo '" + summaryLine + "'", during: "96h"},
		{name: "raised to 72h by default", old: "10m0s", unset: true, body: "echo '" + summaryLine + "'", during: "72h"},
		{name: "longer kept", old: "200h", want: "96h", body: "echo '" + summaryLine + "'", during: "200h"},
		{name: "reset after BR fails", old: "10m0s", want: "96h", body: "exit 1", during: "96h", reason: ReasonToolFailed},
		{name: "bad duration", old: "10m0s", want: "ages", reason: ReasonParseConfigGCLife},
		{name: "bad old value", old: "forever", want: "96h", reason: ReasonParseOldGCLife},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := s3Backup()
			if !tc.unset {
				b.Spec.TikvGCLifeTime = &tc.want
			}
			tool, seen := gcTool(t, tc.body)
			m, out := newTestManager(t, newFakeBucket(map[string]int64{"p/backupmeta": 1}), tool)
			b.Spec.From = useTiDB(t, tc.old)
			if _, err := m.Client.PingcapV1alpha1().Backups("ns").Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			err := m.Backup(t.Context())
			if got := gcNow(t); got != tc.old {
				t.Errorf("tikv_gc_life_time after the backup = %q, want %q back", got, tc.old)
			}
			got := getBackup(t, m)
			if tc.reason == "" {
				if err != nil || !condition.IsBackupComplete(got) {
					t.Fatalf("Backup = %v, status %+v\n%s", err, got.Status, out)
				}
			} else if c := condition.GetBackupCondition(&got.Status, v1alpha1.BackupFailed); !errors.Is(err, ErrFailed) || c == nil || c.Reason != tc.reason {
				t.Fatalf("Backup = %v, Failed %+v, want reason %s\n%s", err, c, tc.reason, out)
			}
			if tc.during == "" {
				if _, err := os.Stat(seen); err == nil {
					t.Errorf("BR ran although the GC life time could not be set")
				}
				return
			}
			if s := readSeen(t, seen); s != tc.during {
				t.Errorf("tikv_gc_life_time while BR ran = %q, want %q", s, tc.during)
			}
		})
	}
}

// TestGCLifeTimeUnreachableTiDB: a spec.from no TiDB answers fails the
// backup with ConnectTidbFailed and BR is not run.
func TestGCLifeTimeUnreachableTiDB(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	b := s3Backup()
	b.Spec.From = &v1alpha1.TiDBAccessConfig{Host: "127.0.0.1", Port: int32(port), SecretName: "pw"}
	ran := filepath.Join(t.TempDir(), "ran")
	m, out := newTestManager(t, newFakeBucket(nil), script(t, "touch "+ran), b)
	if err := m.Backup(t.Context()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Backup = %v, want ErrFailed\n%s", err, out)
	}
	if c := condition.GetBackupCondition(&getBackup(t, m).Status, v1alpha1.BackupFailed); c == nil || c.Reason != ReasonConnectTiDB {
		t.Errorf("Failed = %+v, want %s", c, ReasonConnectTiDB)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("BR ran without the GC life time set")
	}
}

// TestRestoreGCLifeTimeDance: a BR restore with spec.to raises the GC life
// time to spec.tikvGCLifeTime while BR restores and puts it back after; a
// restore without spec.to leaves it alone.
func TestRestoreGCLifeTimeDance(t *testing.T) {
	t.Parallel()
	want := "48h"
	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "b1", Namespace: "ns"}, Spec: v1alpha1.RestoreSpec{
		StorageProvider: v1alpha1.StorageProvider{S3: &v1alpha1.S3StorageProvider{Bucket: "bk", Prefix: "p"}},
		BR:              &v1alpha1.BRConfig{Cluster: "basic"}, TikvGCLifeTime: &want}}
	tool, seen := gcTool(t, `echo '["Full Restore success summary"] [BackupTS=99]'`)
	m, out := newTestManager(t, nil, tool)
	r.Spec.To = useTiDB(t, "10m0s")
	if _, err := m.Client.PingcapV1alpha1().Restores("ns").Create(t.Context(), r.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.Restore(t.Context()); err != nil {
		t.Fatalf("Restore: %v\n%s", err, out)
	}
	if s, now := readSeen(t, seen), gcNow(t); s != want || now != "10m0s" {
		t.Errorf("tikv_gc_life_time while BR ran %q, after %q; want %q then 10m0s", s, now, want)
	}

	r.Spec.To = nil
	m, out = newTestManager(t, nil, tool, r)
	if err := m.Restore(t.Context()); err != nil {
		t.Fatalf("Restore without spec.to: %v\n%s", err, out)
	}
	if s := readSeen(t, seen); s != "10m0s" || !strings.Contains(out.String(), "spec.tikvGCLifeTime 48h is not set") {
		t.Errorf("without spec.to: GC life time while BR ran %q, log:\n%s", s, out)
	}
}

// TestGCLifeTimeResetFailureFailsTheBackup: when the GC life time cannot be
// put back after BR succeeded, the backup is Failed with
// ResetTikvGCLifeTimeFailed, as v1.6's.
func TestGCLifeTimeResetFailureFailsTheBackup(t *testing.T) {
	t.Parallel()
	b := s3Backup()
	b.Spec.From = useTiDB(t, "10m0s")
	// BR succeeds, but takes TiDB's table away before the reset.
	tool := script(t, "mariadb --no-defaults -S "+tidb.Socket+" -u root -e 'RENAME TABLE mysql.tidb TO mysql.tidb_away' || exit 9\necho '"+summaryLine+"'")
	t.Cleanup(func() {
		db, err := tidb.Admin()
		if err == nil {
			_, _ = db.Exec("RENAME TABLE mysql.tidb_away TO mysql.tidb")
			_ = db.Close()
		}
	})
	m, out := newTestManager(t, newFakeBucket(map[string]int64{"p/backupmeta": 1}), tool, b)
	if err := m.Backup(t.Context()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Backup = %v, want ErrFailed\n%s", err, out)
	}
	got := getBackup(t, m)
	if c := condition.GetBackupCondition(&got.Status, v1alpha1.BackupFailed); c == nil || c.Reason != ReasonResetGCLifeTime || condition.IsBackupComplete(got) {
		t.Errorf("Failed = %+v (Complete %v), want %s", c, condition.IsBackupComplete(got), ReasonResetGCLifeTime)
	}
}
