// Package tidbapi is the operator's client of the TiDB status port (10080, spec §5): health through
// `GET /status` and server info through `POST /info`, one pod at a time or fanned out over a cluster.
package tidbapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// StatusPort is TiDB's status port.
const StatusPort = 10080

// DefaultTimeout bounds one TiDB status request. It is shorter than PD's because a sync checks every
// TiDB pod and a down TiDB must not hold the sync for long.
const DefaultTimeout = 3 * time.Second

// maxBodyBytes bounds a TiDB status answer.
const maxBodyBytes = 1 << 20

// Options says how to reach the TiDB pods of one TidbCluster.
type Options = podhttp.Options

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

// statusPort is where the operator reaches a TiDB pod.
var statusPort = podhttp.Port{Component: names.TiDB, Number: StatusPort}

// StatusURL returns the base URL of a TiDB pod's status port:
// "<scheme>://<pod>.<tc>-tidb-peer.<ns>[.svc.<domain>]:10080".
func StatusURL(namespace, tcName, podName string, opts Options) string {
	return statusPort.URL(namespace, tcName, podName, opts)
}

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster).
type HTTPClients = podhttp.HTTPClients

// client is the Client over HTTP; upgrade sends the smooth-upgrade switch
// (upgrade.go), which TiDB may hold for about 10 s.
type client struct{ pods, upgrade *podhttp.Client }

// NewClient returns a Client that sends through httpClients and bounds each request by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	return &client{pods: podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes),
		upgrade: podhttp.NewClient(httpClients, max(timeout, UpgradeTimeout), UpgradeTimeout, maxBodyBytes)}
}

// GetHealth implements Client.
func (c *client) GetHealth(ctx context.Context, namespace, tcName, podName string, opts Options) (bool, error) {
	url := StatusURL(namespace, tcName, podName, opts) + "/status"
	status, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	var unreachable *podhttp.UnreachableError
	switch {
	case errors.As(err, &unreachable) && ctx.Err() == nil:
		logUnhealthy(ctx, namespace, podName, url, unreachable.Err.Error())
		return false, nil
	case err != nil:
		return false, pdapi.Trace(fmt.Errorf("tidb GetHealth %s: %w", podName, err))
	case status >= http.StatusBadRequest:
		logUnhealthy(ctx, namespace, podName, url, fmt.Sprintf("%d %s", status, podhttp.Snippet(body)))
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
	status, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodPost, url, namespace, tcName, opts))
	if err == nil && status != http.StatusOK {
		err = podhttp.StatusError(http.MethodPost, url, status, body)
	}
	if err != nil {
		return nil, pdapi.Trace(fmt.Errorf("tidb GetInfo %s: %w", podName, err))
	}
	info := &Info{}
	if err := json.Unmarshal(body, info); err != nil {
		return nil, pdapi.Trace(fmt.Errorf("tidb GetInfo %s: POST %s: decode: %w", podName, url, err))
	}
	return info, nil
}
