//go:build integration

package sqle2e

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

const readyTimeout = 4 * time.Minute

// backend is the MariaDB and simulator the subtests share; one cluster at a
// time uses it, as each TidbCluster would have a TiDB of its own.
type backend struct {
	server *sqlserver.Server
	sim    *simulator.Simulator
}

// startBackend starts MariaDB (with mariadbd's extra serverArgs) and the
// simulator serving it as every TiDB's MySQL port.
func startBackend(t *testing.T, serverArgs ...string) *backend {
	t.Helper()
	env := framework.NewEnv(t) // the clients the simulator watches with
	server, err := sqlserver.Start(env.Ctx, serverArgs...)
	if err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	t.Cleanup(func() {
		if err := server.Stop(); err != nil {
			t.Errorf("stop MariaDB: %v", err)
		}
	})
	// Other tests of the package run their own simulator on the same
	// addresses (the proxy environment is read once per process): wait for
	// them to be free, and free them again before returning.
	var sim *simulator.Simulator
	framework.WaitFor(t, env.Ctx, 30*time.Second, "the simulator's addresses", func(context.Context) (bool, error) {
		sim, err = simulator.New(simulator.Config{
			Kube: env.Kube, Dynamic: env.Dynamic, Listen: simAddr, Options: simulator.DefaultOptions(),
			MySQLBackend: server.Addr, SOCKSListen: socksAddr,
		}, klog.Background().WithName("simulator"))
		return err == nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		framework.WaitFor(t, context.Background(), 30*time.Second, "the simulator released its addresses",
			func(context.Context) (bool, error) { return listenable(simAddr) && listenable(socksAddr), nil })
	})
	if err := sim.Start(ctx); err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	return &backend{server: server, sim: sim}
}

// TestSQL runs the random root password and the bootstrap SQL against one
// MariaDB, one cluster after the other.
func TestSQL(t *testing.T) {
	operator.InstallCRDs(t)
	b := startBackend(t)
	t.Run("RandomRootPassword", func(t *testing.T) { testRandomRootPassword(t, b) })
	t.Run("BootstrapSQL", func(t *testing.T) { testBootstrapSQL(t, b) })
}

// testRandomRootPassword: the cluster gets Ready, Secret basic-init holds a
// password that logs in to the backend as root (directly and through the
// TiDB Service) while the empty one no longer does, and
// passwordInitialized is true. Then the operator stops, passwordInitialized
// is cleared (as if it had crashed after the SQL, before the status write),
// and a new operator records it again from the same Secret: the Secret is
// unchanged and its password still works.
func testRandomRootPassword(t *testing.T, b *backend) {
	env := framework.NewEnv(t)
	pc := versioned.NewForConfigOrDie(env.Config)
	t.Cleanup(func() { resetRoot(t, b) })
	first := operator.StartManager(t, env.Namespace, nil)
	// examples/basic-random-password, applied unchanged (as the TiDB Operator's example is).
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic-random-password", "tidb-cluster.yaml"), env.Namespace)
	waitReady(t, env, pc, "basic", "Ready with passwordInitialized", passwordInitialized)

	secret, err := env.Kube.CoreV1().Secrets(env.Namespace).Get(env.Ctx, "basic-init", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	password := string(secret.Data["root"])
	if len(password) < 32 {
		t.Fatalf("Secret basic-init has a %d-character password, want 32 or more", len(password))
	}
	if ref := metav1.GetControllerOf(secret); ref == nil || ref.Kind != "TidbCluster" || ref.Name != "basic" {
		t.Errorf("Secret basic-init controller %+v, want TidbCluster basic", ref)
	}
	checkRoot(t, env, b, password)

	if err := first.Stop(); err != nil {
		t.Fatalf("stop the operator: %v", err)
	}
	patch := []byte(`{"status":{"tidb":{"passwordInitialized":false}}}`)
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType,
		patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("clear passwordInitialized: %v", err)
	}
	operator.StartManager(t, env.Namespace, nil)
	waitReady(t, env, pc, "basic", "the new operator records passwordInitialized again", passwordInitialized)
	again, err := env.Kube.CoreV1().Secrets(env.Namespace).Get(env.Ctx, "basic-init", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.UID != secret.UID || again.ResourceVersion != secret.ResourceVersion || string(again.Data["root"]) != password {
		t.Errorf("Secret basic-init changed across the restart (uid %s→%s, resourceVersion %s→%s)",
			secret.UID, again.UID, secret.ResourceVersion, again.ResourceVersion)
	}
	checkRoot(t, env, b, password)
	noFailedAttempt(t, env)
}

// noFailedAttempt asserts that no attempt to set the password failed (each
// failure records a Warning FailedInitRootPassword event).
func noFailedAttempt(t *testing.T, env *framework.Env) {
	t.Helper()
	events, err := env.Kube.CoreV1().Events(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	initialized := 0
	for _, e := range events.Items {
		switch e.Reason {
		case "FailedInitRootPassword":
			t.Errorf("event %s: %s", e.Reason, e.Message)
		case "RootPasswordInitialized":
			initialized++
		}
	}
	if initialized == 0 {
		t.Error("no RootPasswordInitialized event")
	}
}

// checkRoot asserts that root logs in with password and not with the empty
// one, directly on the backend and through the TiDB Service.
func checkRoot(t *testing.T, env *framework.Env, b *backend, password string) {
	t.Helper()
	for _, target := range []tidbsql.Target{{Addr: b.server.Addr}, {Addr: tidbsql.ServiceAddr(env.Namespace, "basic", 0)}} {
		if err := tidbsql.CheckPassword(env.Ctx, target, tidbsql.RootUser, password); err != nil {
			t.Errorf("%s: root with the Secret's password: %v", target.Addr, err)
		}
		if err := tidbsql.CheckPassword(env.Ctx, target, tidbsql.RootUser, ""); !errors.Is(err, tidbsql.ErrAccessDenied) {
			t.Errorf("%s: root with the empty password: %v, want access denied", target.Addr, err)
		}
	}
}

// resetRoot gives root@'%' its empty password back for the next cluster.
func resetRoot(t *testing.T, b *backend) {
	db, err := b.server.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec("ALTER USER 'root'@'%' IDENTIFIED BY ''"); err != nil {
		t.Errorf("reset root: %v", err)
	}
}

func passwordInitialized(tc *v1alpha1.TidbCluster) bool {
	p := tc.Status.TiDB.PasswordInitialized
	return p != nil && *p
}

// bootstrapCluster runs the SQL of ConfigMap init-sql on its first bootstrap.
const bootstrapCluster = `
apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: init
spec:
  version: v8.5.0
  timezone: UTC
  pvReclaimPolicy: Delete
  discovery: {}
  pd: {baseImage: pingcap/pd, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tikv: {baseImage: pingcap/tikv, replicas: 1, requests: {storage: 1Gi}, config: {}}
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
    service: {type: ClusterIP}
    bootstrapSQLConfigMapName: init-sql
`

const bootstrapSQL = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: init-sql
data:
  bootstrap-sql: |
    CREATE DATABASE IF NOT EXISTS app;
    CREATE TABLE app.greetings (id INT PRIMARY KEY, text VARCHAR(32));
    INSERT INTO app.greetings VALUES (1, 'hello from bootstrap');
`

// testBootstrapSQL: the ConfigMap's SQL has run exactly once when the
// cluster is Ready (one row), and still once after the TiDB pod restarted.
func testBootstrapSQL(t *testing.T, b *backend) {
	env := framework.NewEnv(t)
	pc := versioned.NewForConfigOrDie(env.Config)
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAML(t, env.Ctx, bootstrapSQL, env.Namespace)
	framework.ApplyYAML(t, env.Ctx, bootstrapCluster, env.Namespace)
	waitReady(t, env, pc, "init", "Ready after its bootstrap", func(*v1alpha1.TidbCluster) bool {
		return b.sim.BootstrapSQLRan(env.Namespace, "init")
	})
	if got := greetings(t, env, b); got != 1 {
		t.Fatalf("%d rows after the bootstrap, want 1", got)
	}

	pod, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "init-tidb-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Kube.CoreV1().Pods(env.Namespace).Delete(env.Ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("restart %s: %v", pod.Name, err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "init-tidb-0 running again", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return p.UID != pod.UID && p.Status.Phase == corev1.PodRunning, nil
	})
	waitReady(t, env, pc, "init", "Ready after the restart", nil)
	if got := greetings(t, env, b); got != 1 {
		t.Errorf("%d rows after the TiDB pod restarted, want still 1", got)
	}
}

// greetings counts app.greetings' rows through the TiDB Service as root.
func greetings(t *testing.T, env *framework.Env, b *backend) int {
	t.Helper()
	db, err := tidbsql.Open(env.Ctx, tidbsql.Target{Addr: tidbsql.ServiceAddr(env.Namespace, "init", 0)}, tidbsql.RootUser, "")
	if err != nil {
		t.Fatalf("connect through the TiDB Service: %v", err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRowContext(env.Ctx, "SELECT COUNT(*) FROM app.greetings").Scan(&n); err != nil {
		t.Fatalf("count app.greetings: %v", err)
	}
	return n
}

// waitReady waits until name is Ready at its current generation and extra
// (when not nil) holds.
func waitReady(t *testing.T, env *framework.Env, pc versioned.Interface, name, desc string, extra func(*v1alpha1.TidbCluster) bool) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, name+": "+desc, func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		framework.Observef(ctx, "generation %d/%d ready=%+v passwordInitialized=%v", tc.Status.ObservedGeneration,
			tc.Generation, ready, tc.Status.TiDB.PasswordInitialized)
		ok := ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation
		return ok && (extra == nil || extra(tc)), nil
	})
}

// listenable reports whether addr can be listened on (nothing holds it).
func listenable(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}
