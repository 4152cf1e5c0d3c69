//go:build integration

package prometheus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// ensurePrometheus returns the paths of prometheus and promtool, running
// hack/install-prometheus.sh (apt-get) first when either is missing. A
// failed install fails the test with the script's output.
func ensurePrometheus(t *testing.T) (prom, promtool string) {
	t.Helper()
	prom, errP := exec.LookPath("prometheus")
	promtool, errT := exec.LookPath("promtool")
	if errP == nil && errT == nil {
		return prom, promtool
	}
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "install-prometheus.sh"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("prometheus/promtool are not installed and hack/install-prometheus.sh failed (%v); "+
			"install Debian's prometheus package (apt-get install prometheus) and rerun:\n%s", err, out)
	}
	if prom, errP = exec.LookPath("prometheus"); errP != nil {
		t.Fatalf("prometheus not on PATH after install: %v\n%s", errP, out)
	}
	if promtool, errT = exec.LookPath("promtool"); errT != nil {
		t.Fatalf("promtool not on PATH after install: %v\n%s", errT, out)
	}
	return prom, promtool
}

// server is a Prometheus started by the test.
type server struct {
	addr string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// startPrometheus runs prometheus on a free 127.0.0.1 port with a temp data
// dir, scraping target's /metrics every second as job
// "tidb-controller-manager". It waits until Prometheus is ready and stops it
// by PID at cleanup (SIGTERM, SIGKILL after 10s).
func startPrometheus(t *testing.T, bin, target string) *server {
	t.Helper()
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: tidb-controller-manager
    static_configs:
      - targets: [%q]
`, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &server{addr: operator.FreeAddr(t), log: filepath.Join(dir, "prometheus.log"), done: make(chan error, 1)}
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+s.addr, "--log.level=info")
	// A clean environment: no proxy variables of this test binary.
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
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

// stop ends the Prometheus this test started, by its PID.
func (s *server) stop(t *testing.T) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Logf("prometheus pid %d ignored SIGTERM for 10s; killing it", s.cmd.Process.Pid)
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	if t.Failed() {
		t.Logf("prometheus log:\n%s", s.tail())
	}
}

func (s *server) tail() string {
	b, _ := os.ReadFile(s.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// sample is one element of an instant query's vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// value is the sample's value as Prometheus formats it ("3", "+Inf").
func (s sample) value() string { v, _ := s.Value[1].(string); return v }

// query runs an instant query through the HTTP API.
func (s *server) query(ctx context.Context, q string) ([]sample, error) {
	code, body, err := httpGet(ctx, "http://"+s.addr+"/api/v1/query?query="+url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	var resp struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string   `json:"resultType"`
			Result     []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("query %s: HTTP %d: %w: %s", q, code, err, body)
	}
	if resp.Status != "success" || resp.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: HTTP %d status %s: %s", q, code, resp.Status, resp.Error)
	}
	return resp.Data.Result, nil
}

// httpGet fetches a loopback URL (Go never proxies loopback addresses).
func httpGet(ctx context.Context, rawURL string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// promtoolCheck runs `promtool check metrics` on an exposition and returns
// its combined output and error.
func promtoolCheck(promtool string, exposition []byte) (string, error) {
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
