package operator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// Manager is a controller-manager running in the test process.
type Manager struct {
	Options *app.Options
	cancel  context.CancelFunc
	done    chan error
}

// StartManager runs the controller-manager in-process against the test
// cluster, watching only namespace (not cluster-scoped), with its Lease in
// that namespace and fast resyncs. mutate may change the options first. The
// manager is stopped at test cleanup; a Run error fails the test.
func StartManager(t testing.TB, namespace string, mutate func(*app.Options)) *Manager {
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
	if err := opts.Validate(); err != nil {
		t.Fatalf("manager options: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Options: opts, cancel: cancel, done: make(chan error, 1)}
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
