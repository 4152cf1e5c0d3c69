// Package tidbapi is the operator's client of the TiDB status port (10080, spec §5): health through
// `GET /status` and server info through `POST /info`, one pod at a time or fanned out over a cluster.
package tidbapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// StatusPort is TiDB's status port.
const StatusPort = 10080

// DefaultTimeout bounds one TiDB status request. It is shorter than PD's because a sync checks every
// TiDB pod and a down TiDB must not hold the sync for long.
const DefaultTimeout = 3 * time.Second

// maxBodyBytes bounds a TiDB status answer.
const maxBodyBytes = 1 << 20

// Options says how to reach the TiDB pods of one TidbCluster.
type Options struct {
	// TLSEnabled selects https and the cluster client certificate (spec.tlsCluster.enabled).
	TLSEnabled bool
	// ClusterDomain, when set, makes host names fully qualified: "….<ns>.svc.<ClusterDomain>".
	ClusterDomain string
}

// Info is the part of TiDB's `/info` answer (TiDB `infosync.ServerInfo`) the operator reads.
type Info struct {
	IsOwner        bool              `json:"is_owner"`
	Version        string            `json:"version"`
	GitHash        string            `json:"git_hash"`
	DDLID          string            `json:"ddl_id"`
	IP             string            `json:"ip"`
	ListeningPort  uint              `json:"listening_port"`
	StatusPort     uint              `json:"status_port"`
	Lease          string            `json:"lease"`
	StartTimestamp int64             `json:"start_timestamp"`
	Labels         map[string]string `json:"labels"`
}

// Client reads the status port of one TiDB pod per call. Calls do not retry; each is bounded by ctx and
// the client timeout. Implementations are safe for concurrent use. Errors carry the stack of the failed
// call (pdapi.Trace: print with `%+v`) and unwrap to their cause.
type Client interface {
	// GetHealth reports whether TiDB pod podName of TidbCluster namespace/tcName is healthy: its
	// `GET /status` answers a status below 400. A TiDB that cannot be reached, times out or answers ≥ 400
	// is unhealthy — (false, nil), with the reason logged at V(2) — because one TiDB being down is what
	// the health is for and must not fail the sync. The error is reserved for failures of the operator
	// itself: no TLS material, or ctx ended.
	GetHealth(ctx context.Context, namespace, tcName, podName string, opts Options) (bool, error)
	// GetInfo returns the server info of the pod (`POST /info`), e.g. whether it is the DDL owner. Any
	// failure, including an unreachable pod, is an error naming the URL (and status and TiDB's text).
	GetInfo(ctx context.Context, namespace, tcName, podName string, opts Options) (*Info, error)
}

// StatusURL returns the base URL of a TiDB pod's status port:
// "<scheme>://<pod>.<tc>-tidb-peer.<ns>[.svc.<domain>]:10080".
func StatusURL(namespace, tcName, podName string, opts Options) string {
	scheme := "http"
	if opts.TLSEnabled {
		scheme = "https"
	}
	host := podName + "." + tcName + "-tidb-peer." + namespace
	if opts.ClusterDomain != "" {
		host += ".svc." + opts.ClusterDomain
	}
	return fmt.Sprintf("%s://%s:%d", scheme, host, StatusPort)
}

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster).
type HTTPClients interface {
	Get(namespace, tcName string, tlsEnabled bool) (*http.Client, error)
}

var _ HTTPClients = (*pdapi.HTTPClientCache)(nil)

// client is the Client over HTTP.
type client struct {
	httpClients HTTPClients
	timeout     time.Duration
}

// NewClient returns a Client that sends through httpClients and bounds each request by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &client{httpClients: httpClients, timeout: timeout}
}

// GetHealth implements Client.
func (c *client) GetHealth(ctx context.Context, namespace, tcName, podName string, opts Options) (bool, error) {
	url := StatusURL(namespace, tcName, podName, opts) + "/status"
	status, body, err := c.do(ctx, http.MethodGet, url, namespace, tcName, opts.TLSEnabled)
	var unreachable *unreachableError
	switch {
	case errors.As(err, &unreachable) && ctx.Err() == nil:
		logUnhealthy(ctx, namespace, podName, url, unreachable.err.Error())
		return false, nil
	case err != nil:
		return false, pdapi.Trace(fmt.Errorf("tidb GetHealth %s: %w", podName, err))
	case status >= http.StatusBadRequest:
		logUnhealthy(ctx, namespace, podName, url, fmt.Sprintf("%d %s", status, snippet(body)))
		return false, nil
	}
	return true, nil
}

func logUnhealthy(ctx context.Context, namespace, podName, url, reason string) {
	klog.FromContext(ctx).V(2).Info("TiDB is unhealthy", "pod", klog.KRef(namespace, podName), "url", url, "reason", reason)
}

// GetInfo implements Client.
func (c *client) GetInfo(ctx context.Context, namespace, tcName, podName string, opts Options) (*Info, error) {
	url := StatusURL(namespace, tcName, podName, opts) + "/info"
	status, body, err := c.do(ctx, http.MethodPost, url, namespace, tcName, opts.TLSEnabled)
	if err != nil {
		return nil, pdapi.Trace(fmt.Errorf("tidb GetInfo %s: %w", podName, err))
	}
	if status != http.StatusOK {
		return nil, pdapi.Trace(fmt.Errorf("tidb GetInfo %s: POST %s: %d %s: %s", podName, url, status, http.StatusText(status), snippet(body)))
	}
	info := &Info{}
	if err := json.Unmarshal(body, info); err != nil {
		return nil, pdapi.Trace(fmt.Errorf("tidb GetInfo %s: POST %s: decode: %w", podName, url, err))
	}
	return info, nil
}

// unreachableError is a request that got no complete answer (dial, TLS, timeout, reset).
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// do sends one bodiless request bounded by c.timeout and returns the status and (bounded) body. A
// request that got no answer is an *unreachableError.
func (c *client) do(ctx context.Context, method, url, namespace, tcName string, tlsEnabled bool) (int, []byte, error) {
	httpClient, err := c.httpClients.Get(namespace, tcName, tlsEnabled)
	if err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, &unreachableError{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes))
	if err != nil {
		return 0, nil, &unreachableError{err: fmt.Errorf("%s %s: read body: %w", method, url, err)}
	}
	return resp.StatusCode, body, nil
}

// snippet is the start of a body for an error message or log.
func snippet(body []byte) string {
	text := strings.TrimSpace(string(body))
	if len(text) > 256 {
		return text[:256] + "…"
	}
	return text
}
