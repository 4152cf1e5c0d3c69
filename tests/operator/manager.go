package operator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// Manager is a controller-manager running in the test process.
type Manager struct {
	Options *app.Options
	// Release is the chart RBAC the manager runs with; nil when the test
	// gave its own credentials (StartManagerWith with a nil chart).
	Release *ChartRelease
	cancel  context.CancelFunc
	done    chan error
}

// StartManager runs the controller-manager in-process against the test
// cluster with the credentials the Helm chart grants (StartManagerWith with
// the chart's default values), watching only namespace (not
// cluster-scoped), with its Lease in that namespace and fast resyncs.
func StartManager(t testing.TB, namespace string, mutate func(*app.Options)) *Manager {
	t.Helper()
	return StartManagerWith(t, namespace, &Chart{}, mutate)
}

// EnvRBAC names the environment variable that picks the chart's RBAC the
// suite runs with: "cluster-scoped" renders the chart with
// clusterScoped=true (its ClusterRole and the Lease Role) for every
// operator, which still watches only its test's namespace unless the test
// asks for more, so parallel tests keep to their own clusters; anything
// else renders the mode each operator runs (namespaced by default).
const EnvRBAC = "KUBETIDB_TEST_RBAC"

// ClusterScopedRBAC reports whether the suite runs every operator with the
// credentials of a cluster-scoped install (EnvRBAC=cluster-scoped).
func ClusterScopedRBAC() bool { return os.Getenv(EnvRBAC) == "cluster-scoped" }

// StartManagerWith runs the controller-manager in-process, watching only
// namespace unless mutate makes it cluster-scoped. mutate may change the
// options first. With a chart, the operator then runs as the chart's
// ServiceAccount with the RBAC the chart renders for that mode and values,
// applied through the kubeconfig the options name (the admin one unless
// mutate points at another control plane), and with the chart's
// --cluster-permission-* flags: a feature that needs a verb the chart does
// not grant fails its test. A nil chart keeps the options' own kubeconfig
// (tests/helm, which installs the chart itself). The manager is stopped at
// test cleanup; a Run error fails the test.
func StartManagerWith(t testing.TB, namespace string, chart *Chart, mutate func(*app.Options)) *Manager {
	t.Helper()
	opts := app.NewOptions()
	opts.Kubeconfig = framework.KubeconfigPath()
	opts.Controller.Namespace = namespace
	opts.Controller.ClusterScoped = false
	opts.Controller.ResyncDuration = 5 * time.Second
	opts.Controller.StatusRefreshInterval = 10 * time.Second // two resyncs reuse members, the third reads them
	opts.Controller.StatusProgressInterval = 2 * time.Second // progress shows within 2 s (15 s in production)
	opts.Controller.Workers = 2
	opts.MetricsAddr = FreeAddr(t)
	opts.HealthAddr = FreeAddr(t)
	// Long enough that a loaded 2-core machine does not lose the Lease; a stopped manager releases it at once.
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
	opts.ShutdownGraceTime = 2 * time.Second
	if mutate != nil {
		mutate(opts)
	}
	m := &Manager{Options: opts, done: make(chan error, 1)}
	if chart != nil {
		scoped := opts.Controller.ClusterScoped || (ClusterScopedRBAC() && !chart.Namespaced)
		m.Release = ChartCredentials(t, opts.Kubeconfig, opts.Controller.Namespace, scoped, *chart)
		opts.Kubeconfig = m.Release.Kubeconfig
		ApplyChartFlags(t, opts, m.Release.Args)
	}
	if err := opts.Validate(); err != nil {
		t.Fatalf("manager options: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() { m.done <- app.Run(ctx, opts) }()
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("controller-manager exited with error: %v", err)
		}
	})
	return m
}

// Stop cancels the manager and waits for Run to return its error.
func (m *Manager) Stop() error {
	m.cancel()
	select {
	case err := <-m.done:
		m.done <- err
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("controller-manager did not stop within 30s")
	}
}

// Get fetches path from the manager's metrics or health server.
func (m *Manager) Get(ctx context.Context, addr, path string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
