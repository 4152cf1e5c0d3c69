// Package tikvapi is the operator's client of the TiKV status port (20180, spec §5): the number of
// Raft leaders on a TiKV, scraped from its Prometheus metrics, which the operator watches while it
// evicts leaders before restarting the TiKV.
package tikvapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// StatusPort is TiKV's status port.
const StatusPort = 20180

// DefaultTimeout bounds one metrics scrape; a TiKV's metrics text is a few MB.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds the metrics text read.
const maxBodyBytes = 64 << 20

// Options says how to reach the TiKV pods of one TidbCluster.
type Options struct {
	// TLSEnabled selects https and the cluster client certificate (spec.tlsCluster.enabled).
	TLSEnabled bool
	// ClusterDomain, when set, makes host names fully qualified: "….<ns>.svc.<ClusterDomain>".
	ClusterDomain string
}

// Client reads the status port of one TiKV pod per call. Calls do not retry; each is bounded by ctx and
// the client timeout. Implementations are safe for concurrent use.
type Client interface {
	// GetLeaderCount returns the Raft leader count of TiKV pod podName of TidbCluster namespace/tcName:
	// the `tikv_raftstore_region_count{type="leader"}` gauge of `GET /metrics`. It errors when the pod
	// cannot be reached or answers non-200 (the error names the URL and status), and with
	// ErrLeaderCountNotFound when the metric is missing. Errors carry the stack of this call (`%+v`).
	GetLeaderCount(ctx context.Context, namespace, tcName, podName string, opts Options) (int, error)
}

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster).
type HTTPClients interface {
	Get(namespace, tcName string, tlsEnabled bool) (*http.Client, error)
}

var _ HTTPClients = (*pdapi.HTTPClientCache)(nil)

// MetricsURL returns the metrics URL of a TiKV pod:
// "<scheme>://<pod>.<tc>-tikv-peer.<ns>[.svc.<domain>]:20180/metrics".
func MetricsURL(namespace, tcName, podName string, opts Options) string {
	scheme := "http"
	if opts.TLSEnabled {
		scheme = "https"
	}
	host := podName + "." + tcName + "-tikv-peer." + namespace
	if opts.ClusterDomain != "" {
		host += ".svc." + opts.ClusterDomain
	}
	return fmt.Sprintf("%s://%s:%d/metrics", scheme, host, StatusPort)
}

// client is the Client over HTTP.
type client struct {
	httpClients HTTPClients
	timeout     time.Duration
}

// NewClient returns a Client that sends through httpClients and bounds each scrape by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &client{httpClients: httpClients, timeout: timeout}
}

// GetLeaderCount implements Client.
func (c *client) GetLeaderCount(ctx context.Context, namespace, tcName, podName string, opts Options) (int, error) {
	count, err := c.scrape(ctx, namespace, tcName, MetricsURL(namespace, tcName, podName, opts), opts.TLSEnabled)
	if err != nil {
		// Because this is where the error leaves the package, it records its stack here (pdapi.Trace keeps
		// errors.Is working, which pingcap/errors' own wrappers would not).
		return 0, pdapi.Trace(fmt.Errorf("tikv GetLeaderCount %s: %w", podName, err))
	}
	return count, nil
}

func (c *client) scrape(ctx context.Context, namespace, tcName, url string, tlsEnabled bool) (int, error) {
	httpClient, err := c.httpClients.Get(namespace, tcName, tlsEnabled)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, err // *url.Error names method and URL
	}
	defer func() { _ = resp.Body.Close() }()
	body := io.LimitReader(resp.Body, maxBodyBytes)
	if resp.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(io.LimitReader(body, 256))
		return 0, fmt.Errorf("GET %s: %d %s: %s", url, resp.StatusCode, http.StatusText(resp.StatusCode),
			strings.TrimSpace(string(text)))
	}
	count, err := ParseLeaderCount(body)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	return count, nil
}
