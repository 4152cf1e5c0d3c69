package framework

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// KubectlTimeout bounds every kubectl call made by Kubectl and KubectlErr.
const KubectlTimeout = 5 * time.Minute

// Kubectl runs the cached kubectl (same version as the cluster) against the test cluster's
// kubeconfig and returns its stdout; it fails the test, quoting stderr, if kubectl fails.
func Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	stdout, stderr, err := KubectlErr(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return stdout
}

// KubectlErr runs the cached kubectl against the test cluster and returns stdout, stderr and the
// error (an *exec.ExitError for a non-zero exit). The caller's KUBECONFIG is never consulted.
func KubectlErr(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), KubectlTimeout)
	defer cancel()
	return kubectlCtx(ctx, KubeconfigPath(), nil, args...)
}

func kubectlCtx(ctx context.Context, kubeconfig string, stdin []byte, args ...string) (string, string, error) {
	full := append([]string{"--kubeconfig", kubeconfig}, args...)
	cmd := exec.CommandContext(ctx, BinPath("kubectl"), full...)
	cmd.Env = environWithout("KUBECONFIG")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), nil
}

// ApplyYAMLFile applies a manifest file (one or more documents) with `kubectl apply -f`, into
// namespace when it is not empty (objects that name another namespace make kubectl fail). It fails
// the test on error and returns when the API server accepted every object, not when they are ready.
func ApplyYAMLFile(t testing.TB, ctx context.Context, path, namespace string) {
	t.Helper()
	ApplyYAMLFileTo(t, ctx, KubeconfigPath(), path, namespace)
}

// ApplyYAMLFileTo is ApplyYAMLFile against the cluster of kubeconfig (e.g. a private control plane).
func ApplyYAMLFileTo(t testing.TB, ctx context.Context, kubeconfig, path, namespace string) {
	t.Helper()
	args := []string{"apply", "-f", path}
	if namespace != "" {
		args = append(args, "--namespace", namespace)
	}
	if _, stderr, err := kubectlCtx(ctx, kubeconfig, nil, args...); err != nil {
		t.Fatalf("applying %s: %v\nstderr: %s", path, err, stderr)
	}
}

// ApplyYAML is ApplyYAMLFile for a manifest held in memory.
func ApplyYAML(t testing.TB, ctx context.Context, manifest, namespace string) {
	t.Helper()
	args := []string{"apply", "-f", "-"}
	if namespace != "" {
		args = append(args, "--namespace", namespace)
	}
	if _, stderr, err := kubectlCtx(ctx, KubeconfigPath(), []byte(manifest), args...); err != nil {
		t.Fatalf("applying manifest: %v\nstderr: %s\nmanifest:\n%s", err, stderr, manifest)
	}
}
