// Package tikvapi is the operator's client of the TiKV status port (20180, spec §5): the number of
// Raft leaders on a TiKV, scraped from its Prometheus metrics, which the operator watches while it
// evicts leaders before restarting the TiKV.
package tikvapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// StatusPort is TiKV's status port.
const StatusPort = 20180

// DefaultTimeout bounds one metrics scrape; a TiKV's metrics text is a few MB.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds the metrics text read.
const maxBodyBytes = 64 << 20

// Options says how to reach the TiKV pods of one TidbCluster.
type Options = podhttp.Options

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
type HTTPClients = podhttp.HTTPClients

// statusPort is where the operator reaches a TiKV pod.
var statusPort = podhttp.Port{Component: names.TiKV, Number: StatusPort}

// MetricsURL returns the metrics URL of a TiKV pod:
// "<scheme>://<pod>.<tc>-tikv-peer.<ns>[.svc.<domain>]:20180/metrics".
func MetricsURL(namespace, tcName, podName string, opts Options) string {
	return statusPort.URL(namespace, tcName, podName, opts) + "/metrics"
}

// client is the Client over HTTP.
type client struct{ pods *podhttp.Client }

// NewClient returns a Client that sends through httpClients and bounds each scrape by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	return &client{pods: podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes)}
}

// GetLeaderCount implements Client.
func (c *client) GetLeaderCount(ctx context.Context, namespace, tcName, podName string, opts Options) (int, error) {
	url := MetricsURL(namespace, tcName, podName, opts)
	var count int
	err := c.pods.Do(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts), func(status int, body io.Reader) error {
		if status != http.StatusOK {
			text, _ := io.ReadAll(io.LimitReader(body, 256)) // the start is all the error quotes
			return podhttp.StatusError(http.MethodGet, url, status, text)
		}
		var err error
		if count, err = ParseLeaderCount(body); err != nil {
			return fmt.Errorf("GET %s: %w", url, err)
		}
		return nil
	})
	if err != nil {
		// Because this is where the error leaves the package, it records its stack here (pdapi.Trace keeps
		// errors.Is working, which pingcap/errors' own wrappers would not).
		return 0, pdapi.Trace(fmt.Errorf("tikv GetLeaderCount %s: %w", podName, err))
	}
	return count, nil
}
