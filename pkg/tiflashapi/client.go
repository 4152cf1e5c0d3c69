// Package tiflashapi is the operator's client of the TiFlash proxy status port (20292, spec §5): the store
// status a TiFlash reports at `GET /tiflash/store-status`, which the operator waits to be Running after
// each upgraded TiFlash pod (TiFlash ≥ v5.1.2 serves it).
package tiflashapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// ProxyStatusPort is the TiFlash proxy's status port (the Service port `proxy-metrics`).
const ProxyStatusPort = 20292

// DefaultTimeout bounds one store-status request.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds the answer read; the real one is a single word.
const maxBodyBytes = 4 << 10

// StoreStatus is the word TiFlash answers at `/tiflash/store-status`, with no JSON and no newline.
type StoreStatus string

// The store statuses TiFlash reports (its TMTContext::StoreStatus names). A TiFlash starts Idle, is
// Running once its proxy serves Raft, and Stopping then Terminated while it shuts down; Ready exists in
// newer versions between Idle and Running; Unknown is what TiFlash answers for an unexpected value.
const (
	StoreStatusIdle       StoreStatus = "Idle"
	StoreStatusReady      StoreStatus = "Ready"
	StoreStatusRunning    StoreStatus = "Running"
	StoreStatusStopping   StoreStatus = "Stopping"
	StoreStatusTerminated StoreStatus = "Terminated"
	StoreStatusUnknown    StoreStatus = "Unknown"
)

// ErrStoreStatusNotServed is returned (wrapped) when the pod answers 404: a TiFlash older than the API
// (TiUP treats it as running; the operator checks the status only for TiFlash ≥ v5.1.2).
var ErrStoreStatusNotServed = errors.New("TiFlash does not serve /tiflash/store-status")

// Options says how to reach the TiFlash pods of one TidbCluster.
type Options = podhttp.Options

// Client reads the proxy status port of one TiFlash pod per call. Calls do not retry; each is bounded by
// ctx and the client timeout. Implementations are safe for concurrent use.
type Client interface {
	// GetStoreStatus returns the store status of TiFlash pod podName of TidbCluster namespace/tcName
	// (`GET <scheme>://<pod>.<tc>-tiflash-peer.<ns>:20292/tiflash/store-status`), as TiFlash words it: a
	// word outside the StoreStatus constants is returned as is. It errors when the pod cannot be reached,
	// answers an empty body, or answers non-200 (the error names the URL, status and TiFlash's text; 404
	// wraps ErrStoreStatusNotServed). Errors carry the stack of this call (`%+v`) and unwrap to their cause.
	GetStoreStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (StoreStatus, error)
}

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster and HTTP_PROXY is honoured).
type HTTPClients = podhttp.HTTPClients

// proxyStatusPort is where the operator reaches a TiFlash pod.
var proxyStatusPort = podhttp.Port{Component: names.TiFlash, Number: ProxyStatusPort}

// StoreStatusURL returns the store-status URL of a TiFlash pod:
// "<scheme>://<pod>.<tc>-tiflash-peer.<ns>[.svc.<domain>]:20292/tiflash/store-status".
func StoreStatusURL(namespace, tcName, podName string, opts Options) string {
	return proxyStatusPort.URL(namespace, tcName, podName, opts) + "/tiflash/store-status"
}

// client is the Client over HTTP.
type client struct{ pods *podhttp.Client }

// NewClient returns a Client that sends through httpClients and bounds each request by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	return &client{pods: podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes)}
}

// GetStoreStatus implements Client.
func (c *client) GetStoreStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (StoreStatus, error) {
	status, err := c.get(ctx, namespace, tcName, StoreStatusURL(namespace, tcName, podName, opts), opts)
	if err != nil {
		// Because this is where the error leaves the package, it records its stack here.
		return "", pdapi.Trace(fmt.Errorf("tiflash GetStoreStatus %s: %w", podName, err))
	}
	return status, nil
}

func (c *client) get(ctx context.Context, namespace, tcName, url string, opts Options) (StoreStatus, error) {
	status, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(string(body))
	switch {
	case status == http.StatusNotFound:
		return "", fmt.Errorf("GET %s: 404 Not Found: %w", url, ErrStoreStatusNotServed)
	case status != http.StatusOK:
		return "", podhttp.StatusError(http.MethodGet, url, status, body)
	case text == "":
		return "", fmt.Errorf("GET %s: empty store status", url)
	}
	return StoreStatus(text), nil
}
