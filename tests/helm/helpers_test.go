//go:build integration

package helm

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// chartDir is the chart under test.
func chartDir() string { return filepath.Join(framework.RepoRoot(), "charts", "tidb-operator") }

// runHelm runs the cached helm against the test cluster with private
// config/cache/data dirs (nothing of the user's helm setup is read) and
// returns stdout and stderr, failing the test when helm fails.
func runHelm(t *testing.T, args ...string) (string, string) {
	t.Helper()
	stdout, stderr, err := runHelmErr(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout, stderr
}

func runHelmErr(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := operator.HelmCommand(ctx, t, append(args, "--kubeconfig", framework.KubeconfigPath())...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// install installs the chart as release into namespace with --wait (KWOK
// makes the Deployment's pod Ready) and uninstalls it at cleanup, before the
// namespace goes, so the cluster-scoped ClusterRole and binding go too.
func install(t *testing.T, release, namespace string, set ...string) {
	t.Helper()
	args := []string{"install", release, chartDir(), "--namespace", namespace, "--wait", "--timeout", "2m",
		"--set", "operatorImage=kubetidb/tidb-operator:kwok-test"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	runHelm(t, args...)
	t.Cleanup(func() {
		if _, stderr, err := runHelmErr(t, "uninstall", release, "--namespace", namespace, "--wait"); err != nil {
			t.Errorf("helm uninstall %s: %v\n%s", release, err, stderr)
		}
	})
}

// releaseName derives a release name, unique in the cluster, from a test
// namespace (its random suffix).
func releaseName(namespace string) string {
	return "kubetidb-" + namespace[strings.LastIndex(namespace, "-")+1:]
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// chart's ServiceAccount (name) in namespace (operator.ServiceAccountKubeconfig).
func serviceAccountKubeconfig(t *testing.T, env *framework.Env, namespace, name string) string {
	t.Helper()
	if name != operator.ChartServiceAccount {
		t.Fatalf("ServiceAccount %s is not the chart's %s", name, operator.ChartServiceAccount)
	}
	return operator.ServiceAccountKubeconfig(env.Ctx, t, env.Config, env.Kube, namespace)
}

// canI asks the API server (as admin, impersonating subject) whether subject
// may do verb on resource ("pods", "secrets/name", or "kind.group#subresource");
// namespace "" means --all-namespaces.
func canI(t *testing.T, subject, verb, resource, namespace string) bool {
	t.Helper()
	args := []string{"auth", "can-i", verb, "--as", subject}
	if res, sub, ok := strings.Cut(resource, "#"); ok {
		args = append(args, res, "--subresource", sub)
	} else {
		args = append(args, resource)
	}
	if namespace == "" {
		args = append(args, "--all-namespaces")
	} else {
		args = append(args, "-n", namespace)
	}
	stdout, stderr, err := framework.KubectlErr(args...)
	switch strings.TrimSpace(stdout) {
	case "yes":
		return true
	case "no":
		return false
	}
	t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout, stderr)
	return false
}

// permission is one `kubectl auth can-i` expectation.
type permission struct {
	verb, resource, namespace string
	want                      bool
}

// checkPermissions asserts every expectation for subject.
func checkPermissions(t *testing.T, subject string, perms []permission) {
	t.Helper()
	for _, p := range perms {
		if got := canI(t, subject, p.verb, p.resource, p.namespace); got != p.want {
			where := "-n " + p.namespace
			if p.namespace == "" {
				where = "--all-namespaces"
			}
			t.Errorf("kubectl auth can-i %s %s %s --as %s = %t, want %t", p.verb, p.resource, where, subject, got, p.want)
		}
	}
}

var (
	simOnce sync.Once
	simErr  error
)

// startSimulator runs one simulator for the whole test binary on simAddr,
// watching every namespace with the admin client; it stops when the process
// exits. Only the operator runs as the ServiceAccount.
func startSimulator(t *testing.T, env *framework.Env) {
	t.Helper()
	simOnce.Do(func() {
		var sim *simulator.Simulator
		sim, simErr = simulator.New(simulator.Config{
			Kube: env.Kube, Dynamic: env.Dynamic, Listen: simAddr, Options: simulator.DefaultOptions(),
		}, klog.Background().WithName("simulator"))
		if simErr == nil {
			simErr = sim.Start(context.Background())
		}
	})
	if simErr != nil {
		t.Fatalf("start simulator: %v", simErr)
	}
	// The simulator's admin API answers plain requests on its own address.
	resp, err := http.Get("http://" + simAddr + "/sim/v1/healthz")
	if err != nil {
		t.Fatalf("simulator health: %v", err)
	}
	_ = resp.Body.Close()
}

// decodeManifests splits helm's output into objects, skipping empty documents.
func decodeManifests(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("decode rendered manifest: %v\n%s", err, doc)
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out
}
