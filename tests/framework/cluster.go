// Package framework is the harness for kubetidb's integration tests: it finds or starts a real local
// control plane (hack/local-cluster.sh: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and KWOK fake nodes), hands each test a fresh namespace and clients, and offers polling and kubectl
// helpers. The package itself has no build tag so `go vet ./...` checks it; tests that use it carry
// `//go:build integration` and call Main from TestMain:
//
//	func TestMain(m *testing.M) { framework.Main(m) }
package framework

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Environment variables the harness reads.
const (
	// EnvKubeconfig names the kubeconfig of an already running cluster (set by hack/test-integration.sh).
	// When it is empty, Main starts a private cluster and stops it after the tests.
	EnvKubeconfig = "KUBETIDB_KUBECONFIG"
	// EnvLocalDir is the state dir of the cluster (pki, logs); informational for tests.
	EnvLocalDir = "KUBETIDB_LOCAL_DIR"
	// EnvKeepNamespaces, when "1", keeps each test's namespace after the test for debugging.
	EnvKeepNamespaces = "KUBETIDB_KEEP_NS"
)

var (
	mu         sync.Mutex
	kubeconfig string
	stateDir   string
	baseConfig *rest.Config
	binPaths   = map[string]string{}
)

// Main runs the package's tests against a real control plane and exits with their result. It uses
// the cluster named by KUBETIDB_KUBECONFIG if set; otherwise it starts one with hack/local-cluster.sh
// (building binaries on first use, which takes minutes cold) in a temp state dir on free ports, and
// stops it after m.Run. A cluster it started is also stopped by a watchdog if the test binary dies.
func Main(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if path := os.Getenv(EnvKubeconfig); path != "" {
		if err := useKubeconfig(path, os.Getenv(EnvLocalDir)); err != nil {
			fmt.Fprintf(os.Stderr, "framework: %v\n", err)
			return 1
		}
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "kubetidb-test-cluster-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "framework: %v\n", err)
		return 1
	}
	clusterEnv, err := privateClusterEnv(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "framework: %v\n", err)
		return 1
	}
	// Stop the cluster before reporting, because its processes would otherwise outlive the test binary.
	defer func() {
		if err := runScript(clusterEnv, "down"); err != nil {
			fmt.Fprintf(os.Stderr, "framework: stopping the private cluster in %s: %v\n", dir, err)
		}
	}()
	if err := runScript(clusterEnv, "up"); err != nil {
		fmt.Fprintf(os.Stderr, "framework: starting a private cluster in %s: %v\n", dir, err)
		return 1
	}
	if err := useKubeconfig(filepath.Join(dir, "kubeconfig"), dir); err != nil {
		fmt.Fprintf(os.Stderr, "framework: %v\n", err)
		return 1
	}
	return m.Run()
}

// privateClusterEnv returns the environment for hack/local-cluster.sh that puts a cluster in dir on
// free 127.0.0.1 ports and ties its lifetime to this process.
func privateClusterEnv(dir string) ([]string, error) {
	names := []string{"KUBETIDB_APISERVER_PORT", "KUBETIDB_ETCD_PORT", "KUBETIDB_ETCD_PEER_PORT",
		"KUBETIDB_KCM_PORT", "KUBETIDB_SCHEDULER_PORT", "KUBETIDB_KWOK_PORT"}
	ports, err := freePorts(len(names))
	if err != nil {
		return nil, err
	}
	env := []string{EnvLocalDir + "=" + dir, "KUBETIDB_OWNER_PID=" + strconv.Itoa(os.Getpid())}
	for i, n := range names {
		env = append(env, n+"="+strconv.Itoa(ports[i]))
	}
	return env, nil
}

// freePorts asks the kernel for n distinct free ports on 127.0.0.1. They are released before the
// cluster binds them; a race with another process makes `up` fail with a clear "port in use".
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// runScript runs hack/local-cluster.sh with extra environment, streaming its progress to stderr.
func runScript(extraEnv []string, args ...string) error {
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "local-cluster.sh"), args...)
	cmd.Env = append(environWithout("KUBECONFIG"), extraEnv...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("hack/local-cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func useKubeconfig(path, dir string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	if err := waitReady(cfg); err != nil {
		return fmt.Errorf("cluster of %s is not ready (is it up? hack/local-cluster.sh status): %w", path, err)
	}
	mu.Lock()
	defer mu.Unlock()
	kubeconfig, stateDir, baseConfig = path, dir, cfg
	return nil
}

// waitReady waits up to 30s for the API server's /readyz, so a stopped cluster fails fast and clearly
// instead of as a connection error in every test.
func waitReady(cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return Poll(context.Background(), 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			Observef(ctx, "GET /readyz: %v", err)
		}
		return err == nil, nil
	})
}

// ensureInit lets RestConfig and friends work in a package whose TestMain does not call Main, as long
// as KUBETIDB_KUBECONFIG names a cluster.
func ensureInit() {
	mu.Lock()
	ready := baseConfig != nil
	mu.Unlock()
	if ready {
		return
	}
	path := os.Getenv(EnvKubeconfig)
	if path == "" {
		panic("framework: no cluster: call framework.Main from TestMain, or set " + EnvKubeconfig)
	}
	if err := useKubeconfig(path, os.Getenv(EnvLocalDir)); err != nil {
		panic(err)
	}
}

// RestConfig returns a fresh copy of the admin (system:masters) config of the test cluster, with
// QPS/Burst raised so tests are not throttled client-side. Callers may mutate the copy.
func RestConfig() *rest.Config {
	ensureInit()
	mu.Lock()
	cfg := rest.CopyConfig(baseConfig)
	mu.Unlock()
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "kubetidb-integration-tests"
	return cfg
}

// KubeconfigPath returns the path of the test cluster's admin kubeconfig.
func KubeconfigPath() string {
	ensureInit()
	mu.Lock()
	defer mu.Unlock()
	return kubeconfig
}

// StateDir returns the cluster's state dir (logs are in StateDir()/logs), or "" when the cluster was
// given by KUBETIDB_KUBECONFIG without KUBETIDB_LOCAL_DIR.
func StateDir() string {
	ensureInit()
	mu.Lock()
	defer mu.Unlock()
	return stateDir
}

var repoRoot = sync.OnceValue(func() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/kubetidb/tidb-operator\n")) {
			return d
		}
		if filepath.Dir(d) == d {
			panic("framework: no github.com/kubetidb/tidb-operator go.mod above " + dir)
		}
	}
})

// RepoRoot returns the repository root (the directory of the project's go.mod), found from the
// working directory, which `go test` sets to the package directory.
func RepoRoot() string { return repoRoot() }

// BinPath returns the cached path of a control-plane binary ("kubectl", "etcd", "kwok", "helm",
// "kube-apiserver", ...) as hack/local-cluster.sh names it, the one source of truth for versions.
// The binary exists once the cluster is up (helm only after `hack/local-cluster.sh build-helm`).
// It panics if the script cannot be run, which means the checkout is broken.
func BinPath(name string) string {
	mu.Lock()
	defer mu.Unlock()
	if p, ok := binPaths[name]; ok {
		return p
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "local-cluster.sh"), "bin-path", name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		panic(fmt.Sprintf("framework: hack/local-cluster.sh bin-path %s: %v: %s", name, err, stderr.String()))
	}
	p := strings.TrimSpace(string(out))
	binPaths[name] = p
	return p
}

// environWithout returns os.Environ() minus the named variables.
func environWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		drop := false
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				drop = true
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}
