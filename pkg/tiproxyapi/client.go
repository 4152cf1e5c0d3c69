// Package tiproxyapi is the operator's client of the TiProxy API port (3080, `api.addr`): a proxy's
// health at `GET /api/debug/health` (200 with `{"config_checksum":N}` while it serves; 502 once it is
// shutting down; 500 "service not ready" while it starts) and its configuration at
// `GET /api/admin/config/?format=json`.
package tiproxyapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// StatusPort is TiProxy's API port (the Service port `tiproxy-api`).
const StatusPort = 3080

// DefaultTimeout bounds one request. It is as short as TiDB's because a sync asks every proxy and a
// down proxy must not hold the sync for long.
const DefaultTimeout = 3 * time.Second

// maxBodyBytes bounds an answer; a full configuration is a few kilobytes.
const maxBodyBytes = 1 << 20

// Paths of the TiProxy API the operator reads.
const (
	HealthPath = "/api/debug/health"
	// ConfigPath answers TOML unless format=json is asked for (TiProxy before v1.0 answers TOML only).
	ConfigPath = "/api/admin/config/"
)

// Options says how to reach the TiProxy pods of one TidbCluster.
type Options = podhttp.Options

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster and HTTP_PROXY is honoured).
type HTTPClients = podhttp.HTTPClients

// Health is what a proxy answered at HealthPath.
type Health struct {
	// Healthy is true when the proxy answered 200: it is up and not shutting down.
	Healthy bool
	// ConfigChecksum is the checksum of the configuration the proxy runs (`config_checksum`; 0 from a
	// TiProxy that does not report it).
	ConfigChecksum uint32
	// Body is the answer as the proxy worded it, trimmed (the TiDB Operator's member info); "" when
	// unhealthy.
	Body string
	// Reason says why the proxy is unhealthy: unreachable, shutting down, not ready, or the status
	// and text it answered; "" when healthy.
	Reason string
}

// healthBody is TiProxy's lib/config HealthInfo.
type healthBody struct {
	ConfigChecksum uint32 `json:"config_checksum"`
}

// Config is the part of a proxy's configuration the operator reads; the JSON and TOML names are
// TiProxy's (lib/config Config).
type Config struct {
	Workdir string            `json:"workdir,omitempty" toml:"workdir,omitempty"`
	Proxy   ProxyConfig       `json:"proxy,omitempty" toml:"proxy,omitempty"`
	API     APIConfig         `json:"api,omitempty" toml:"api,omitempty"`
	Labels  map[string]string `json:"labels,omitempty" toml:"labels,omitempty"`
}

// ProxyConfig is the [proxy] table: the SQL port and its graceful shutdown.
type ProxyConfig struct {
	Addr          string `json:"addr,omitempty" toml:"addr,omitempty"`
	AdvertiseAddr string `json:"advertise-addr,omitempty" toml:"advertise-addr,omitempty"`
	PDAddrs       string `json:"pd-addrs,omitempty" toml:"pd-addrs,omitempty"`
	// MaxConnections is 0 for unlimited.
	MaxConnections uint64 `json:"max-connections,omitempty" toml:"max-connections,omitempty"`
	// GracefulWaitBeforeShutdown is how many seconds a closing proxy reports unhealthy while it still
	// accepts connections; GracefulCloseConnTimeout how many seconds it then drains its clients.
	GracefulWaitBeforeShutdown int `json:"graceful-wait-before-shutdown,omitempty" toml:"graceful-wait-before-shutdown,omitempty"`
	GracefulCloseConnTimeout   int `json:"graceful-close-conn-timeout,omitempty" toml:"graceful-close-conn-timeout,omitempty"`
}

// APIConfig is the [api] table: the API port.
type APIConfig struct {
	Addr string `json:"addr,omitempty" toml:"addr,omitempty"`
}

// Client reads the API port of one TiProxy pod per call. Calls do not retry; each is bounded by ctx and
// the client timeout. Implementations are safe for concurrent use. Errors carry the stack of the failed
// call (pdapi.Trace: print with `%+v`) and unwrap to their cause.
type Client interface {
	// GetHealth returns the health of TiProxy pod podName of TidbCluster namespace/tcName
	// (`GET <scheme>://<pod>.<tc>-tiproxy-peer.<ns>:3080/api/debug/health`). A proxy that cannot be
	// reached, times out or answers anything but 200 is unhealthy — Health{Reason: …}, nil — because
	// one proxy being down is what the health is for and must not fail the sync. The error is reserved
	// for failures of the operator itself: no TLS material, or ctx ended.
	GetHealth(ctx context.Context, namespace, tcName, podName string, opts Options) (Health, error)
	// GetConfig returns the configuration the pod runs (`GET …/api/admin/config/?format=json`, read as
	// TOML from a TiProxy that ignores format). Any failure, including an unreachable pod, is an error
	// naming the URL (and status and TiProxy's text).
	GetConfig(ctx context.Context, namespace, tcName, podName string, opts Options) (*Config, error)
}

// apiPort is where the operator reaches a TiProxy pod.
var apiPort = podhttp.Port{Component: names.TiProxy, Number: StatusPort}

// StatusURL returns the base URL of a TiProxy pod's API port:
// "<scheme>://<pod>.<tc>-tiproxy-peer.<ns>[.svc.<domain>]:3080".
func StatusURL(namespace, tcName, podName string, opts Options) string {
	return apiPort.URL(namespace, tcName, podName, opts)
}

// client is the Client over HTTP.
type client struct{ pods *podhttp.Client }

// NewClient returns a Client that sends through httpClients and bounds each request by timeout
// (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, timeout time.Duration) Client {
	return &client{pods: podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes)}
}

// GetHealth implements Client.
func (c *client) GetHealth(ctx context.Context, namespace, tcName, podName string, opts Options) (Health, error) {
	url := StatusURL(namespace, tcName, podName, opts) + HealthPath
	status, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	var unreachable *podhttp.UnreachableError
	switch {
	case errors.As(err, &unreachable) && ctx.Err() == nil:
		return unhealthy(ctx, namespace, podName, url, unreachable.Err.Error()), nil
	case err != nil:
		return Health{}, pdapi.Trace(fmt.Errorf("tiproxy GetHealth %s: %w", podName, err))
	case status != http.StatusOK:
		return unhealthy(ctx, namespace, podName, url, unhealthyReason(status, body)), nil
	}
	h := Health{Healthy: true, Body: strings.TrimSpace(string(body))}
	var hb healthBody
	if json.Unmarshal(body, &hb) == nil {
		h.ConfigChecksum = hb.ConfigChecksum
	}
	return h, nil
}

// unhealthyReason words a refused health check: TiProxy answers 502 once it is shutting down and 500
// "service not ready" before it serves.
func unhealthyReason(status int, body []byte) string {
	switch {
	case status == http.StatusBadGateway:
		return "shutting down (502)"
	case status == http.StatusInternalServerError && strings.Contains(string(body), "service not ready"):
		return "not ready yet (500 service not ready)"
	}
	return fmt.Sprintf("%d %s: %s", status, http.StatusText(status), podhttp.Snippet(body))
}

func unhealthy(ctx context.Context, namespace, podName, url, reason string) Health {
	klog.FromContext(ctx).V(2).Info("TiProxy is unhealthy", "pod", klog.KRef(namespace, podName), "url", url, "reason", reason)
	return Health{Reason: reason}
}

// GetConfig implements Client.
func (c *client) GetConfig(ctx context.Context, namespace, tcName, podName string, opts Options) (*Config, error) {
	url := StatusURL(namespace, tcName, podName, opts) + ConfigPath + "?format=json"
	status, body, err := c.pods.ReadAll(ctx, podhttp.NewRequest(http.MethodGet, url, namespace, tcName, opts))
	if err == nil && status != http.StatusOK {
		err = podhttp.StatusError(http.MethodGet, url, status, body)
	}
	if err != nil {
		return nil, pdapi.Trace(fmt.Errorf("tiproxy GetConfig %s: %w", podName, err))
	}
	cfg, err := decodeConfig(body)
	if err != nil {
		return nil, pdapi.Trace(fmt.Errorf("tiproxy GetConfig %s: GET %s: decode: %w", podName, url, err))
	}
	return cfg, nil
}

// decodeConfig reads JSON, or TOML from a TiProxy that ignores format=json.
func decodeConfig(body []byte) (*Config, error) {
	cfg := &Config{}
	text := strings.TrimSpace(string(body))
	if strings.HasPrefix(text, "{") {
		return cfg, json.Unmarshal(body, cfg)
	}
	return cfg, toml.Unmarshal(body, cfg)
}
