//go:build integration

package helm

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// chartDir is the chart under test.
func chartDir() string { return filepath.Join(framework.RepoRoot(), "charts", "tidb-operator") }

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helmBinary returns the cached helm, building it with
// `hack/local-cluster.sh build-helm` (about a minute, once) when missing.
func helmBinary(t *testing.T) string {
	t.Helper()
	helmOnce.Do(func() {
		helmPath = framework.BinPath("helm")
		if _, err := os.Stat(helmPath); err == nil {
			return
		}
		cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "local-cluster.sh"), "build-helm")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			helmErr = err
			helmPath = out.String()
			return
		}
		_, helmErr = os.Stat(helmPath)
	})
	if helmErr != nil {
		t.Fatalf("building helm with hack/local-cluster.sh build-helm: %v\n%s", helmErr, helmPath)
	}
	return helmPath
}

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
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, helmBinary(t), append(args, "--kubeconfig", framework.KubeconfigPath())...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(home, "data")}
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
// ServiceAccount namespace/name with a TokenRequest token (1h), trusting the
// admin config's CA, and returns its path.
func serviceAccountKubeconfig(t *testing.T, env *framework.Env, namespace, name string) string {
	t.Helper()
	tr, err := env.Kube.CoreV1().ServiceAccounts(namespace).CreateToken(env.Ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", namespace, name, err)
	}
	ca := env.Config.CAData
	if len(ca) == 0 && env.Config.CAFile != "" {
		if ca, err = os.ReadFile(env.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	if len(ca) == 0 {
		t.Fatal("the admin config carries no CA to trust")
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa", Namespace: namespace}
	cfg.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
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
