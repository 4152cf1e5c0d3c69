// Package ticdcapi is the operator's client of TiCDC's server port (8301, spec §5): a capture's own status
// (`GET /status`), the captures of its TiCDC cluster (`GET /api/v1/captures`), and the steps of a graceful
// shutdown — draining a capture's tables to the others (`PUT /api/v1/captures/drain`), handing the owner
// role over (`POST /api/v1/owner/resign`) and the cluster's health (`GET /api/v1/health`), all of TiCDC's
// open API v1. The captures, drain and resign calls are answered (or forwarded) by the TiCDC owner, so
// any live capture of the cluster can be asked.
package ticdcapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Port is TiCDC's server port: its open API, status and metrics (the Service port `ticdc`).
const Port = 8301

// DefaultTimeout bounds one request. Drain and resign are answered at once (TiCDC moves the tables
// and elects the owner afterwards), so no call needs longer.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds an answer read; a captures list of a thousand captures is about 150 KB.
const maxBodyBytes = 1 << 20

// Options says how to reach the TiCDC pods of one TidbCluster.
type Options = podhttp.Options

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster and HTTP_PROXY is honoured).
type HTTPClients = podhttp.HTTPClients

// Status is a capture's answer to `GET /status` (TiCDC's model.ServerStatus).
type Status struct {
	// ID is the capture's ID, a UUID new on every start of the process.
	ID string `json:"id"`
	// Version is the TiCDC release, such as "v8.5.0".
	Version string `json:"version"`
	// GitHash is the commit TiCDC was built from.
	GitHash string `json:"git_hash"`
	// Pid is the process ID of the capture.
	Pid int `json:"pid"`
	// IsOwner is true on the capture that schedules the cluster's tables.
	IsOwner bool `json:"is_owner"`
}

// Capture is one element of `GET /api/v1/captures` (TiCDC's model.Capture).
type Capture struct {
	// ID is the capture's ID.
	ID string `json:"id"`
	// IsOwner is true on the owner.
	IsOwner bool `json:"is_owner"`
	// Address is the capture's advertise address, "<pod>.<tc>-ticdc-peer.<ns>.svc[.<domain>]:8301" for
	// the operator's pods (CapturePod reads the pod name back).
	Address string `json:"address"`
}

// drainRequest is the body of `PUT /api/v1/captures/drain`.
type drainRequest struct {
	CaptureID string `json:"capture_id"`
}

// drainResponse is its answer: the tables still on the capture when the owner got the request.
type drainResponse struct {
	CurrentTableCount int `json:"current_table_count"`
}

// ErrNotServed is returned (wrapped) when a pod answers 404: a TiCDC older than the call (the drain API
// came with v6.3, the open API v1 with v5.0), which the caller treats as "nothing to prepare".
var ErrNotServed = errors.New("TiCDC does not serve this API")

// ErrUnavailable is returned (wrapped) when a pod answers 503 Service Unavailable: TiCDC is starting or
// has no owner yet, and the call should be retried later.
var ErrUnavailable = errors.New("TiCDC is not ready to serve the API")

// Client calls the server port of one TiCDC pod per call. Calls do not retry; each is bounded by ctx and
// the client timeout. Implementations are safe for concurrent use. Every error names the method and URL,
// carries the stack of the failed call (pdapi.Trace: print with `%+v`) and unwraps to its cause: a
// *podhttp.UnreachableError when no answer came, ErrNotServed for 404, ErrUnavailable for 503; another
// refused status quotes TiCDC's error (`{"error_msg": …, "error_code": …}`).
type Client interface {
	// GetStatus returns the status of the capture on pod podName of TidbCluster namespace/tcName
	// (`GET <scheme>://<pod>.<tc>-ticdc-peer.<ns>:8301/status`, which every TiCDC serves).
	GetStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (*Status, error)
	// GetCaptures returns every capture of the TiCDC cluster, as pod podName knows them
	// (`GET /api/v1/captures`).
	GetCaptures(ctx context.Context, namespace, tcName, podName string, opts Options) ([]Capture, error)
	// DrainCapture asks TiCDC, through pod podName, to move every table off capture captureID and returns
	// how many tables the capture still had when the owner got the request (`PUT /api/v1/captures/drain`,
	// body {"capture_id": …}). TiCDC moves them afterwards: the caller repeats the request until it
	// answers 0. TiCDC refuses (400) to drain the owner or the only capture, and a capture it does not know.
	DrainCapture(ctx context.Context, namespace, tcName, podName, captureID string, opts Options) (int, error)
	// ResignOwner asks the current owner, through pod podName, to give the owner role up
	// (`POST /api/v1/owner/resign`); the captures then elect a new owner, which may take a few seconds.
	ResignOwner(ctx context.Context, namespace, tcName, podName string, opts Options) error
	// IsHealthy reports whether the TiCDC cluster is healthy as pod podName sees it (`GET /api/v1/health`):
	// true on 200, false on 500, which is how TiCDC answers "unhealthy".
	IsHealthy(ctx context.Context, namespace, tcName, podName string, opts Options) (bool, error)
}

// serverPort is where the operator reaches a TiCDC pod.
var serverPort = podhttp.Port{Component: names.TiCDC, Number: Port}

// BaseURL returns the base URL of a TiCDC pod's server port:
// "<scheme>://<pod>.<tc>-ticdc-peer.<ns>[.svc.<domain>]:8301".
func BaseURL(namespace, tcName, podName string, opts Options) string {
	return serverPort.URL(namespace, tcName, podName, opts)
}

// The paths of the calls, relative to BaseURL.
const (
	PathStatus   = "/status"
	PathCaptures = "/api/v1/captures"
	PathDrain    = "/api/v1/captures/drain"
	PathResign   = "/api/v1/owner/resign"
	PathHealth   = "/api/v1/health"
)

// client is the Client over HTTP.
type client struct {
	pods        *podhttp.Client
	httpClients HTTPClients
	timeout     time.Duration
}

// NewClient returns a Client that sends through httpClients and bounds each request by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &client{
		pods:        podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes),
		httpClients: httpClients,
		timeout:     timeout,
	}
}

// GetStatus implements Client.
func (c *client) GetStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (*Status, error) {
	status := &Status{}
	if err := c.getJSON(ctx, namespace, tcName, podName, PathStatus, opts, status); err != nil {
		// Because this is where the error leaves the package, it records its stack here.
		return nil, pdapi.Trace(fmt.Errorf("ticdc GetStatus %s: %w", podName, err))
	}
	return status, nil
}

// GetCaptures implements Client.
func (c *client) GetCaptures(ctx context.Context, namespace, tcName, podName string, opts Options) ([]Capture, error) {
	var captures []Capture
	if err := c.getJSON(ctx, namespace, tcName, podName, PathCaptures, opts, &captures); err != nil {
		return nil, pdapi.Trace(fmt.Errorf("ticdc GetCaptures %s: %w", podName, err))
	}
	return captures, nil
}

// DrainCapture implements Client.
func (c *client) DrainCapture(ctx context.Context, namespace, tcName, podName, captureID string, opts Options) (int, error) {
	url := BaseURL(namespace, tcName, podName, opts) + PathDrain
	body, _ := json.Marshal(drainRequest{CaptureID: captureID}) // a struct of one string always marshals
	status, answer, err := c.sendJSON(ctx, http.MethodPut, url, namespace, tcName, body, opts)
	if err == nil {
		err = accept(http.MethodPut, url, status, answer)
	}
	resp := drainResponse{}
	if err == nil {
		if jerr := json.Unmarshal(answer, &resp); jerr != nil {
			err = fmt.Errorf("PUT %s: decode %q: %w", url, podhttp.Snippet(answer), jerr)
		}
	}
	if err != nil {
		return 0, pdapi.Trace(fmt.Errorf("ticdc DrainCapture %s via %s: %w", captureID, podName, err))
	}
	return resp.CurrentTableCount, nil
}

// ResignOwner implements Client.
func (c *client) ResignOwner(ctx context.Context, namespace, tcName, podName string, opts Options) error {
	url := BaseURL(namespace, tcName, podName, opts) + PathResign
	status, answer, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodPost, url, namespace, tcName, opts))
	if err == nil {
		err = accept(http.MethodPost, url, status, answer)
	}
	if err != nil {
		return pdapi.Trace(fmt.Errorf("ticdc ResignOwner via %s: %w", podName, err))
	}
	return nil
}

// IsHealthy implements Client.
func (c *client) IsHealthy(ctx context.Context, namespace, tcName, podName string, opts Options) (bool, error) {
	url := BaseURL(namespace, tcName, podName, opts) + PathHealth
	status, answer, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err == nil && status == http.StatusInternalServerError {
		return false, nil
	}
	if err == nil {
		err = accept(http.MethodGet, url, status, answer)
	}
	if err != nil {
		return false, pdapi.Trace(fmt.Errorf("ticdc IsHealthy via %s: %w", podName, err))
	}
	return true, nil
}

// getJSON reads path of a pod and decodes a 200 answer into out.
func (c *client) getJSON(ctx context.Context, namespace, tcName, podName, path string, opts Options, out any) error {
	url := BaseURL(namespace, tcName, podName, opts) + path
	status, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err != nil {
		return err
	}
	if err := accept(http.MethodGet, url, status, body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: decode %q: %w", url, podhttp.Snippet(body), err)
	}
	return nil
}

// accept returns nil for a 2xx status (TiCDC answers its asynchronous calls 202 Accepted), the
// sentinel errors for 404 and 503, and a status error quoting TiCDC's answer otherwise.
func accept(method, url string, status int, body []byte) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: %w", podhttp.StatusError(method, url, status, body), ErrNotServed)
	case status == http.StatusServiceUnavailable:
		return fmt.Errorf("%w: %w", podhttp.StatusError(method, url, status, body), ErrUnavailable)
	default:
		return podhttp.StatusError(method, url, status, body)
	}
}
