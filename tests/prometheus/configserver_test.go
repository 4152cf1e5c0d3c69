//go:build integration

package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// startPrometheusConfig runs prometheus on a free 127.0.0.1 port with the
// configuration file cfgPath, as the monitor pod runs it (external labels
// expanded from POD_NAME), waits until it is ready and stops it by PID at
// cleanup.
func startPrometheusConfig(t *testing.T, bin, cfgPath string) *server {
	t.Helper()
	dir := t.TempDir()
	s := &server{addr: operator.FreeAddr(t), log: filepath.Join(dir, "prometheus.log"), done: make(chan error, 1)}
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+s.addr, "--log.level=info", "--enable-feature=expand-external-labels")
	// A clean environment: no proxy variables of this test binary.
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "POD_NAME=tm-monitor-0"}
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() { s.done <- s.cmd.Wait(); _ = logFile.Close() }()
	t.Cleanup(func() { s.stop(t) })
	t.Logf("prometheus pid %d on %s, log %s", s.cmd.Process.Pid, s.addr, s.log)
	framework.WaitFor(t, context.Background(), time.Minute, "prometheus ready", func(ctx context.Context) (bool, error) {
		select {
		case err := <-s.done:
			s.done <- err
			if err == nil {
				err = errors.New("exit status 0")
			}
			return false, fmt.Errorf("prometheus exited: %w; log:\n%s", err, s.tail())
		default:
		}
		code, _, err := httpGet(ctx, "http://"+s.addr+"/-/ready")
		framework.Observef(ctx, "GET /-/ready: %d %v", code, err)
		return code == http.StatusOK, nil
	})
	return s
}

// execCombined runs bin with args and returns its combined output.
func execCombined(bin string, args ...string) (string, error) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}
