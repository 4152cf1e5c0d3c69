//go:build integration

package sqle2e

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
	"github.com/kubetidb/tidb-operator/tests/sqlserver"
)

// The example's names and passwords (examples/initialize).
const (
	initCluster  = "initialize-demo"
	initJob      = "initialize-demo-tidb-initializer"
	initRootPass = "change-me-root"
	initAppPass  = "change-me-app"
)

// TestTidbInitializer applies examples/initialize unchanged to a simulated
// cluster whose TiDB MySQL port is a real MariaDB behind the simulator's
// SOCKS5 proxy: the controller creates the Job initialize-demo-tidb-initializer
// with the contract's command line and mounts; that command line, run as its
// pod would (the backup-manager built from cmd/backup-manager, the mounted
// Secret and ConfigMap materialized, TiDB's Service reached through the
// proxy), initializes the database: root's Secret password logs in and the
// empty one is refused, user app logs in and has the init SQL's grant, and
// the init SQL's row exists once; the TidbInitializer mirrors the Job to
// Completed. A second run of the same command succeeds and changes nothing.
// Deleting the TidbInitializer collects its Job.
func TestTidbInitializer(t *testing.T) {
	operator.InstallCRDs(t)
	bin := buildBackupManager(t)
	startInitializerBackend(t)
	env := framework.NewEnv(t)
	pc := versioned.NewForConfigOrDie(env.Config)
	operator.StartManager(t, env.Namespace, nil)
	for _, f := range []string{"tidb-cluster.yaml", "tidb-secret.yaml", "init-sql.yaml", "tidb-initializer.yaml"} {
		framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "initialize", f), env.Namespace)
	}

	job := waitInitializerJob(t, env)
	ti, err := pc.PingcapV1alpha1().TidbInitializers(env.Namespace).Get(env.Ctx, initCluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkInitializerJob(t, env, job, ti)
	service := tidbsql.Target{Addr: tidbsql.ServiceAddr(env.Namespace, initCluster, 0)}
	if err := tidbsql.CheckPassword(env.Ctx, service, tidbsql.RootUser, ""); err != nil {
		t.Fatalf("before the Job ran, root should log in with the empty password: %v", err)
	}

	out := runInitializerJob(t, env, job, bin)
	checkInitialized(t, env, service)
	framework.WaitFor(t, env.Ctx, readyTimeout, "TidbInitializer Completed", func(ctx context.Context) (bool, error) {
		ti, err := pc.PingcapV1alpha1().TidbInitializers(env.Namespace).Get(ctx, initCluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "phase %s succeeded %d conditions %+v", ti.Status.Phase, ti.Status.Succeeded, ti.Status.Conditions)
		return ti.Status.Phase == v1alpha1.InitializePhaseCompleted && ti.Status.Succeeded == 1, nil
	})

	again := runInitializerJob(t, env, job, bin)
	if !strings.Contains(again, "already has passwordSecret's password") {
		t.Errorf("the second run did not find the first one's record:\n%s", again)
	}
	checkInitialized(t, env, service)
	for _, secret := range []string{initRootPass, initAppPass} {
		if strings.Contains(out+again, secret) {
			t.Errorf("the Job's output holds a password:\n%s\n%s", out, again)
		}
	}
	jobs, err := env.Kube.BatchV1().Jobs(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 || jobs.Items[0].UID != job.UID {
		t.Errorf("%d Jobs, want only %s", len(jobs.Items), job.Name)
	}

	if err := pc.PingcapV1alpha1().TidbInitializers(env.Namespace).Delete(env.Ctx, initCluster, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "the deleted TidbInitializer's Job is collected", func(ctx context.Context) (bool, error) {
		_, err := env.Kube.BatchV1().Jobs(env.Namespace).Get(ctx, initJob, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// startInitializerBackend starts a MariaDB and the simulator serving it as
// every TiDB's MySQL port, and at cleanup waits until the simulator has
// released its addresses (which the next test's simulator listens on).
func startInitializerBackend(t *testing.T) {
	t.Helper()
	env := framework.NewEnv(t) // the clients the simulator watches with
	server, err := sqlserver.Start(env.Ctx)
	if err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	t.Cleanup(func() {
		if err := server.Stop(); err != nil {
			t.Errorf("stop MariaDB: %v", err)
		}
	})
	var sim *simulator.Simulator
	framework.WaitFor(t, env.Ctx, 30*time.Second, "the simulator listens", func(context.Context) (bool, error) {
		sim, err = simulator.New(simulator.Config{
			Kube: env.Kube, Dynamic: env.Dynamic, Listen: simAddr, Options: simulator.DefaultOptions(),
			MySQLBackend: server.Addr, SOCKSListen: socksAddr,
		}, klog.Background().WithName("simulator"))
		return err == nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		framework.WaitFor(t, context.Background(), 30*time.Second, "the simulator released its addresses", func(context.Context) (bool, error) {
			return addrFree(simAddr) && addrFree(socksAddr), nil
		})
	})
	if err := sim.Start(ctx); err != nil {
		t.Fatalf("start simulator: %v", err)
	}
}

func addrFree(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// buildBackupManager builds cmd/backup-manager, the image's /backup-manager.
func buildBackupManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "backup-manager")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/backup-manager")
	cmd.Dir = framework.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/backup-manager: %v\n%s", err, out)
	}
	return bin
}

func waitInitializerJob(t *testing.T, env *framework.Env) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	framework.WaitFor(t, env.Ctx, readyTimeout, "Job "+initJob, func(ctx context.Context) (bool, error) {
		j, err := env.Kube.BatchV1().Jobs(env.Namespace).Get(ctx, initJob, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		job = j
		return err == nil, err
	})
	return job
}

// checkInitializerJob asserts the Job's contract: owner, labels, command
// and args, mounts of the example's Secret and ConfigMap, and pod fields.
func checkInitializerJob(t *testing.T, env *framework.Env, job *batchv1.Job, ti *v1alpha1.TidbInitializer) {
	t.Helper()
	if ref := metav1.GetControllerOf(job); ref == nil || ref.Kind != "TidbInitializer" || ref.UID != ti.UID {
		t.Errorf("Job controller %+v, want TidbInitializer %s", ref, ti.UID)
	}
	if job.Labels["app.kubernetes.io/component"] != "tidb-initializer" || job.Labels["app.kubernetes.io/instance"] != initCluster {
		t.Errorf("Job labels %v", job.Labels)
	}
	c := job.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"tidb-initializer", "--host=" + initCluster + "-tidb." + env.Namespace + ".svc", "--port=4000",
		"--password-dir=/etc/tidb-initializer/password", "--init-sql-file=/etc/tidb-initializer/init-sql/init-sql"}
	if !slices.Equal(c.Command, []string{"/backup-manager"}) || !slices.Equal(c.Args, wantArgs) {
		t.Errorf("Job runs %v %v, want /backup-manager %v", c.Command, c.Args, wantArgs)
	}
	if c.Image == "" || c.Image == ti.Spec.Image {
		t.Errorf("Job image %q, want the operator's", c.Image)
	}
	if c.Resources.Limits.Memory().String() != "128Mi" || !slices.Contains(c.Env, corev1.EnvVar{Name: "TZ", Value: "UTC"}) {
		t.Errorf("Job resources %v env %v", c.Resources, c.Env)
	}
	vols := map[string]string{}
	for _, v := range job.Spec.Template.Spec.Volumes {
		switch {
		case v.Secret != nil:
			vols[v.Name] = "secret/" + v.Secret.SecretName
		case v.ConfigMap != nil:
			vols[v.Name] = "configmap/" + v.ConfigMap.Name
		}
	}
	if vols["password"] != "secret/tidb-secret" || vols["init-sql"] != "configmap/initialize-demo-init-sql" {
		t.Errorf("Job volumes %v", vols)
	}
}

// runInitializerJob runs what the Job's pod runs: bin (the image's
// /backup-manager) with exactly the container's args and literal env, the
// mounted Secret and ConfigMap written under a temporary root that the
// args' mount paths are moved into, and TiDB's Service reached through the
// simulator's SOCKS5 proxy. It fails the test unless the run exits 0, and
// returns its output.
func runInitializerJob(t *testing.T, env *framework.Env, job *batchv1.Job, bin string) string {
	t.Helper()
	c := job.Spec.Template.Spec.Containers[0]
	root := t.TempDir()
	var mountPaths []string
	for _, m := range c.VolumeMounts {
		materialize(t, env, job, m, filepath.Join(root, m.MountPath))
		mountPaths = append(mountPaths, m.MountPath)
	}
	args := slices.Clone(c.Args[1:])
	for i, a := range args {
		for _, p := range mountPaths {
			if flag, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(value, p) {
				args[i] = flag + "=" + filepath.Join(root, value)
			}
		}
	}
	cmdEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "ALL_PROXY=socks5://" + socksAddr}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("env %s comes from %+v, which this test does not resolve", e.Name, e.ValueFrom)
		}
		cmdEnv = append(cmdEnv, e.Name+"="+e.Value)
	}
	ctx, cancel := context.WithTimeout(env.Ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{c.Args[0]}, args...)...)
	cmd.Env = cmdEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Job's command %v exited: %v\n%s", c.Args, err, out)
	}
	return string(out)
}

// materialize writes the Secret or ConfigMap volume of mount m into dir, as
// the kubelet would (one file per key, or per item).
func materialize(t *testing.T, env *framework.Env, job *batchv1.Job, m corev1.VolumeMount, dir string) {
	t.Helper()
	files := map[string][]byte{}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Name != m.Name {
			continue
		}
		switch {
		case v.Secret != nil:
			s, err := env.Kube.CoreV1().Secrets(job.Namespace).Get(env.Ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			files = s.Data
		case v.ConfigMap != nil:
			cm, err := env.Kube.CoreV1().ConfigMaps(job.Namespace).Get(env.Ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, item := range v.ConfigMap.Items {
				files[item.Path] = []byte(cm.Data[item.Key])
			}
		default:
			t.Fatalf("volume %s: a source this test does not materialize", v.Name)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// checkInitialized asserts the example's effects through the TiDB Service:
// root's password from the Secret (the empty one refused), user app with
// its password and the init SQL's grant, and exactly one greeting row.
func checkInitialized(t *testing.T, env *framework.Env, service tidbsql.Target) {
	t.Helper()
	if err := tidbsql.CheckPassword(env.Ctx, service, tidbsql.RootUser, ""); !errors.Is(err, tidbsql.ErrAccessDenied) {
		t.Errorf("root with the empty password: %v, want access denied", err)
	}
	db, err := tidbsql.Open(env.Ctx, service, "app", initAppPass)
	if err != nil {
		t.Fatalf("user app with the Secret's password: %v", err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.QueryRowContext(env.Ctx, "SELECT COUNT(*) FROM app.greetings").Scan(&n); err != nil {
		t.Fatalf("app reads app.greetings (the init SQL's grant): %v", err)
	}
	if n != 1 {
		t.Errorf("app.greetings has %d rows, want 1: the init SQL ran %d times", n, n)
	}
	root, err := tidbsql.Open(env.Ctx, service, tidbsql.RootUser, initRootPass)
	if err != nil {
		t.Fatalf("root with the Secret's password: %v", err)
	}
	_ = root.Close()
}
