//go:build integration

package backup

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/backup/condition"
	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

// tidbServer is a real MySQL-protocol server (MariaDB) standing in for the
// TiDB a Backup's spec.from (a Restore's spec.to) names: TiDB's mysql.tidb
// table with tikv_gc_life_time, and user bk whose password is Secret
// "tidb-secret"'s in the test namespace.
type tidbServer struct {
	srv *sqlserver.Server
}

// startTiDB starts the stand-in TiDB with tikv_gc_life_time gc and creates
// its password Secret in f's namespace.
func startTiDB(t *testing.T, f *fixture, gc string) *tidbServer {
	t.Helper()
	srv, err := sqlserver.Start(f.env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	s := &tidbServer{srv: srv}
	s.exec(t, "CREATE TABLE mysql.tidb (VARIABLE_NAME VARCHAR(64) PRIMARY KEY, VARIABLE_VALUE VARCHAR(1024), COMMENT VARCHAR(1024))")
	s.exec(t, "INSERT INTO mysql.tidb VALUES ('tikv_gc_life_time', ?, 'GC life time')", gc)
	s.exec(t, "CREATE USER 'bk'@'%' IDENTIFIED BY 'pw'")
	s.exec(t, "GRANT ALL PRIVILEGES ON *.* TO 'bk'@'%'")
	if _, err := f.env.Kube.CoreV1().Secrets(f.env.Namespace).Create(f.env.Ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "tidb-secret"}, Data: map[string][]byte{"password": []byte("pw")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *tidbServer) exec(t *testing.T, stmt string, args ...any) {
	t.Helper()
	db, err := s.srv.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec(stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// gcLifeTime is the server's tikv_gc_life_time now.
func (s *tidbServer) gcLifeTime(t *testing.T) string {
	t.Helper()
	db, err := s.srv.Admin()
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

// access is the login of the server for spec.from / spec.to.
func (s *tidbServer) access(t *testing.T) *v1alpha1.TiDBAccessConfig {
	t.Helper()
	host, port, err := net.SplitHostPort(s.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return &v1alpha1.TiDBAccessConfig{Host: host, Port: int32(p), User: "bk", SecretName: "tidb-secret"}
}

// TestGCLifeTimeAroundBackupAndRestoreJobs: a BR Backup with spec.from,
// tikvGCLifeTime 96h and useKMS (its Job gets v1.6's AWS_DEFAULT_REGION, the
// S3 region), run through the controller's backup-<name> Job, has
// the backup-manager raise the stand-in TiDB's 10m0s tikv_gc_life_time to
// 96h around BR and put it back, and ends Complete; the Restore of it with
// spec.to and no tikvGCLifeTime raises it to v1.6's 72h around BR's restore
// and puts it back, Complete.
func TestGCLifeTimeAroundBackupAndRestoreJobs(t *testing.T) {
	f := newJobFixture(t)
	ctx, ns := f.env.Ctx, f.env.Namespace
	tidb := startTiDB(t, f.fixture, "10m0s")
	f.createBackup(t, "gc", f.srv.provider("cluster-a/gc"), func(b *v1alpha1.Backup) {
		b.Spec.From = tidb.access(t)
		b.Spec.TikvGCLifeTime = ptrTo("96h")
		b.Spec.UseKMS = true
	})
	job := f.waitJob(t, "backup-gc")
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "AWS_DEFAULT_REGION" && e.Value != "us-east-1" {
			t.Errorf("Job backup-gc's AWS_DEFAULT_REGION = %q, want the S3 region us-east-1 (useKMS)", e.Value)
		}
	}
	if !slices.ContainsFunc(job.Spec.Template.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "AWS_DEFAULT_REGION" }) {
		t.Errorf("Job backup-gc has no AWS_DEFAULT_REGION although useKMS is set")
	}
	code, out := f.runJob(t, job)
	if code != 0 {
		t.Fatalf("Job backup-gc's command exited %d:\n%s", code, out)
	}
	if b := f.backup(t, "gc"); !condition.IsBackupComplete(b) {
		t.Fatalf("Backup status %+v, want Complete", b.Status)
	}
	for _, want := range []string{"tikv_gc_life_time of 127.0.0.1 is 10m0s", "set tikv_gc_life_time of 127.0.0.1 to 96h", "reset tikv_gc_life_time to 10m0s"} {
		if !strings.Contains(out, want) {
			t.Errorf("backup-manager's log lacks %q:\n%s", want, out)
		}
	}
	if got := tidb.gcLifeTime(t); got != "10m0s" {
		t.Errorf("tikv_gc_life_time after the backup = %q, want 10m0s back", got)
	}

	r := &v1alpha1.Restore{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: ns}, Spec: v1alpha1.RestoreSpec{
		StorageProvider: f.srv.provider("cluster-a/gc"), BR: &v1alpha1.BRConfig{Cluster: "basic"}, To: tidb.access(t)}}
	if _, err := f.client.PingcapV1alpha1().Restores(ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, out = f.runJob(t, f.waitJob(t, "restore-rt"))
	if code != 0 {
		t.Fatalf("Job restore-rt's command exited %d:\n%s", code, out)
	}
	f.waitRestore(t, "the Restore is Complete", condition.IsRestoreComplete)
	if !strings.Contains(out, "set tikv_gc_life_time of 127.0.0.1 to 72h") || !strings.Contains(out, "reset tikv_gc_life_time to 10m0s") {
		t.Errorf("the restore did not raise the GC life time to 72h and reset it:\n%s", out)
	}
	if got := tidb.gcLifeTime(t); got != "10m0s" {
		t.Errorf("tikv_gc_life_time after the restore = %q, want 10m0s back", got)
	}
}
