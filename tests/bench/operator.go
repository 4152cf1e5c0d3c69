//go:build bench

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/label"
)

// managedBy is the label selector of every object the operator creates,
// and of its own informers.
var managedBy = label.ManagedByLabelKey + "=" + label.TiDBOperator

// operatorNamespace holds the operator's leader-election Lease.
const operatorNamespace = "kubetidb-system"

// Operator is the tidb-controller-manager process under test.
type Operator struct {
	*Process
	MetricsURL string
	HealthURL  string
	LogPath    string
}

// StartOperator runs the built controller-manager as in production:
// cluster-scoped, leader-elected, default workers, QPS and resync, plus
// extra flags and environment; its PD/TiKV/TiDB traffic goes through proxyURL.
func StartOperator(bin, kubeconfig, proxyURL, logPath string, extra, extraEnv []string) (*Operator, error) {
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"-kubeconfig=" + kubeconfig,
		"-cluster-scoped=true",
		"-namespace=" + operatorNamespace,
		"-leader-elect=true",
		"-metrics-addr=" + metrics,
		"-health-addr=" + health,
	}, extra...)
	env := append([]string{"HTTP_PROXY=" + proxyURL, "http_proxy=" + proxyURL, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost"}, extraEnv...)
	p, err := StartProcess("tidb-controller-manager", bin, logPath, env, args...)
	if err != nil {
		return nil, err
	}
	return &Operator{Process: p, MetricsURL: "http://" + metrics + "/metrics", HealthURL: "http://" + health, LogPath: logPath}, nil
}

// WaitReady waits until the operator leads and its TidbCluster workers run:
// /readyz alone does not say so, because a standby waiting for the Lease is
// ready too. The workers gauge is set only once the leader's caches synced.
func (o *Operator) WaitReady(ctx context.Context, timeout time.Duration) error {
	return poll(ctx, 100*time.Millisecond, timeout, "operator leading with synced caches", func(ctx context.Context) (bool, error) {
		if exited, err := o.Exited(); exited {
			return false, fmt.Errorf("operator exited (%w); see %s", err, o.LogPath)
		}
		code, _, err := httpGet(ctx, o.HealthURL+"/readyz")
		if err != nil || code != 200 {
			return false, nil
		}
		m, err := o.Metrics(ctx)
		if err != nil {
			return false, nil
		}
		_, running := m[`controller_runtime_max_concurrent_reconciles{controller="tidbcluster"}`]
		return running, nil
	})
}

// Metrics scrapes /metrics into samples keyed by the series as exposed,
// e.g. `workqueue_depth{name="tidbcluster"}`.
func (o *Operator) Metrics(ctx context.Context) (map[string]float64, error) {
	code, body, err := httpGet(ctx, o.MetricsURL)
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET /metrics: %d", code)
	}
	return parseMetrics(body), nil
}

// parseMetrics reads the Prometheus text format: one sample per line,
// "<series> <value>", comments skipped.
func parseMetrics(body string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// sumMetric adds every sample of name whose series contains all of the
// label matchers, e.g. sumMetric(m, "controller_runtime_reconcile_total", `controller="tidbcluster"`).
func sumMetric(m map[string]float64, name string, matchers ...string) float64 {
	total := 0.0
	for series, v := range m {
		if series != name && !strings.HasPrefix(series, name+"{") {
			continue
		}
		ok := true
		for _, want := range matchers {
			ok = ok && strings.Contains(series, want)
		}
		if ok {
			total += v
		}
	}
	return total
}

// DepthSampler records the largest tidbcluster queue depth seen while it runs.
type DepthSampler struct {
	mu   sync.Mutex
	max  float64
	stop context.CancelFunc
	done chan struct{}
}

// SampleDepth scrapes the operator's queue depth every interval until Stop.
func (o *Operator) SampleDepth(ctx context.Context, interval time.Duration) *DepthSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &DepthSampler{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if m, err := o.Metrics(ctx); err == nil {
				d := sumMetric(m, "workqueue_depth", `name="tidbcluster"`)
				s.mu.Lock()
				s.max = max(s.max, d)
				s.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the largest depth seen.
func (s *DepthSampler) Stop() float64 {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// countLogLines counts the lines of a log file that contain each needle.
func countLogLines(path string, needles ...string) map[string]int {
	out := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() {
		for _, n := range needles {
			if strings.Contains(sc.Text(), n) {
				out[n]++
			}
		}
	}
	return out
}
