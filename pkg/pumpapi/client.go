// Package pumpapi is the operator's client of the HTTP API of TiDB Binlog's Pump (port 8250, spec §5):
// the binlog registry as a pump serves it (`GET /status`) and the request that takes a pump offline
// (`PUT /state/<nodeID>/close`).
//
// The registry lives in PD's etcd under /tidb-binlog/v1/pumps, one JSON record per pump. The TiDB
// Operator reads it with an etcd client; the operator reads the same records as any pump serves them on
// /status, so it needs no etcd client and no etcd access of its own. Every pump answers with the whole
// registry, so any live pump of the cluster can be asked. A pump that is going offline no longer reads
// the registry (its /status answers an error message), and a pump that went offline stops serving.
package pumpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Port is Pump's port: gRPC for TiDB and Drainer, and the HTTP API on the same listener (the Service
// port `pump`).
const Port = 8250

// DefaultTimeout bounds one request. Both calls are answered at once (a pump closes in the background),
// and a sync may ask several pumps in turn, so a down pump must not hold it for long.
const DefaultTimeout = 3 * time.Second

// maxBodyBytes bounds an answer read; a registry of a hundred pumps is about 20 KB.
const maxBodyBytes = 1 << 20

// PathStatus is the path of the registry as a pump serves it.
const PathStatus = "/status"

// OfflinePath returns the path of the request that takes the pump with node ID nodeID offline:
// "/state/<nodeID>/close" (a node ID is "<host>:<port>", escaped as a path segment).
func OfflinePath(nodeID string) string { return "/state/" + url.PathEscape(nodeID) + "/close" }

// The states of a pump in the registry (tidb-binlog's pkg/node).
const (
	// StateOnline: the pump takes binlog from TiDB.
	StateOnline = "online"
	// StatePausing and StatePaused: the pump was stopped (a restart); it comes back online when it starts.
	StatePausing = "pausing"
	StatePaused  = "paused"
	// StateClosing: the pump was asked to go offline and waits until the drainers have read its binlog.
	StateClosing = "closing"
	// StateOffline: the pump went offline for good; its binlog was read by every drainer.
	StateOffline = "offline"
)

// Options says how to reach the Pump pods of one TidbCluster.
type Options = podhttp.Options

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster and HTTP_PROXY is honoured).
type HTTPClients = podhttp.HTTPClients

// NodeStatus is one pump's record in the binlog registry (tidb-binlog's node.Status).
type NodeStatus struct {
	// NodeID identifies the pump, "<hostname>:<port>" unless configured: "<pod>:8250" for the operator's.
	NodeID string `json:"nodeId"`
	// Host is the address the pump advertises, "<pod>.<tc>-pump[.<ns>.svc[.<domain>]]:8250" for the
	// operator's pumps.
	Host string `json:"host"`
	// State is one of the State constants.
	State string `json:"state"`
	// IsAlive is what the pump reported last; the registry does not keep it current.
	IsAlive bool `json:"isAlive"`
	// Score is the pump's own measure of its load.
	Score int64 `json:"score"`
	// MaxCommitTS is the largest commit timestamp the pump stored.
	MaxCommitTS int64 `json:"maxCommitTS"`
	// UpdateTS is when the pump last wrote its record (a PD timestamp).
	UpdateTS int64 `json:"updateTS"`
}

// Status is a pump's answer to `GET /status` (tidb-binlog's pump.HTTPStatus).
type Status struct {
	// Nodes is the registry, by node ID.
	Nodes map[string]*NodeStatus `json:"status"`
	// CommitTS is a PD timestamp taken while answering.
	CommitTS int64 `json:"CommitTS"`
	// ErrMsg is set, and Nodes empty, when the pump could not read the registry or PD.
	ErrMsg string `json:"ErrMsg"`
}

// Sorted returns the registry's records ordered by node ID, skipping empty entries.
func (s *Status) Sorted() []NodeStatus {
	out := make([]NodeStatus, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		if n != nil {
			out = append(out, *n)
		}
	}
	slices.SortFunc(out, func(a, b NodeStatus) int { return strings.Compare(a.NodeID, b.NodeID) })
	return out
}

// offlineAnswer is Pump's answer to the offline request (tidb-binlog's util.Response): code 200 when
// the pump accepted, 3 with a message when it refused.
type offlineAnswer struct {
	Message string `json:"message"`
	Code    int    `json:"code"`
}

// codeOK is the code of an accepted request.
const codeOK = 200

// ErrRegistryUnavailable is returned (wrapped, with the pump's message) when a pump answered /status
// without the registry: it could not read PD's etcd, or it is going offline and no longer reads it.
// Another pump may still answer.
var ErrRegistryUnavailable = errors.New("the pump could not read the binlog registry")

// RefusedError is a pump's refusal of the offline request: it is not that node, or its state is not
// online (a pump that is already closing refuses another request).
type RefusedError struct {
	// Code is Pump's code (3 for every refusal).
	Code int
	// Message is Pump's message, e.g. "this pump's state is closing, apply close failed!".
	Message string
}

// Error quotes the pump's refusal.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("the pump refused to go offline (code %d): %s", e.Code, e.Message)
}

// PumpState returns the state a refusal names ("this pump's state is <state>, …"), or "" when it
// names none (a wrong node ID).
func (e *RefusedError) PumpState() string {
	const prefix = "this pump's state is "
	i := strings.Index(e.Message, prefix)
	if i < 0 {
		return ""
	}
	state, _, _ := strings.Cut(e.Message[i+len(prefix):], ",")
	return strings.TrimSpace(state)
}

// Client calls the API of one Pump pod per call. Calls do not retry; each is bounded by ctx and the
// client timeout. Implementations are safe for concurrent use. Every error names the call and the pod,
// carries the stack of the failed call (pdapi.Trace: print with `%+v`) and unwraps to its cause: a
// *podhttp.UnreachableError when no answer came, ErrRegistryUnavailable, a *RefusedError.
type Client interface {
	// GetStatus returns the binlog registry as pump podName of TidbCluster namespace/tcName serves it
	// (`GET <scheme>://<pod>.<tc>-pump.<ns>:8250/status`). A 200 answer without the registry (ErrMsg) is
	// ErrRegistryUnavailable.
	GetStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (*Status, error)
	// Offline asks pump podName, whose registry node ID is nodeID, to go offline
	// (`PUT …/state/<nodeID>/close`). The pump answers at once and goes offline in the background:
	// closing, then, once every drainer read its binlog, offline in the registry; the process then exits.
	// Only the pump of that node accepts, and only while it is online; a refusal is a *RefusedError.
	Offline(ctx context.Context, namespace, tcName, podName, nodeID string, opts Options) error
}

// BaseURL returns the base URL of a Pump pod's API: "<scheme>://<pod>.<tc>-pump.<ns>[.svc.<domain>]:8250",
// through the headless Service <tc>-pump (Pump's governing Service has no "-peer" suffix).
func BaseURL(namespace, tcName, podName string, opts Options) string {
	host := podName + "." + names.ServiceHost(names.Member(tcName, names.Pump), namespace, opts.ClusterDomain)
	return names.Scheme(opts.TLSEnabled) + "://" + host + ":" + strconv.Itoa(Port)
}

// client is the Client over HTTP.
type client struct{ pods *podhttp.Client }

// NewClient returns a Client that sends through httpClients and bounds each request by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	return &client{pods: podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes)}
}

// GetStatus implements Client.
func (c *client) GetStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (*Status, error) {
	status, err := c.getStatus(ctx, namespace, tcName, podName, opts)
	if err != nil {
		// Because this is where the error leaves the package, it records its stack here.
		return nil, pdapi.Trace(fmt.Errorf("pump GetStatus %s: %w", podName, err))
	}
	return status, nil
}

func (c *client) getStatus(ctx context.Context, namespace, tcName, podName string, opts Options) (*Status, error) {
	url := BaseURL(namespace, tcName, podName, opts) + PathStatus
	code, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, podhttp.StatusError(http.MethodGet, url, code, body)
	}
	status := &Status{}
	if err := json.Unmarshal(body, status); err != nil {
		return nil, fmt.Errorf("GET %s: decode %q: %w", url, podhttp.Snippet(body), err)
	}
	if status.ErrMsg != "" {
		return nil, fmt.Errorf("GET %s: %w: %s", url, ErrRegistryUnavailable, status.ErrMsg)
	}
	return status, nil
}

// Offline implements Client.
func (c *client) Offline(ctx context.Context, namespace, tcName, podName, nodeID string, opts Options) error {
	if err := c.offline(ctx, namespace, tcName, podName, nodeID, opts); err != nil {
		return pdapi.Trace(fmt.Errorf("pump Offline %s (node %s): %w", podName, nodeID, err))
	}
	return nil
}

func (c *client) offline(ctx context.Context, namespace, tcName, podName, nodeID string, opts Options) error {
	url := BaseURL(namespace, tcName, podName, opts) + OfflinePath(nodeID)
	code, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodPut, url, namespace, tcName, opts))
	if err != nil {
		return err
	}
	// Pump answers its refusals 200 too, with a code in the body; the TiDB Operator accepts any status
	// below 400 and then reads the code.
	if code < 200 || code >= 400 {
		return podhttp.StatusError(http.MethodPut, url, code, body)
	}
	answer := offlineAnswer{}
	if err := json.Unmarshal(body, &answer); err != nil {
		return fmt.Errorf("PUT %s: decode %q: %w", url, podhttp.Snippet(body), err)
	}
	if answer.Code != codeOK {
		return &RefusedError{Code: answer.Code, Message: answer.Message}
	}
	return nil
}
