// Package client is a typed Go client of the TiDB cluster simulator's admin API (`/sim/v1`), for tests
// that read the simulated state and inject faults.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// Client talks to one simulator. It is safe for concurrent use.
type Client struct {
	base string
	http *http.Client
}

// New returns a Client for the simulator at baseURL (e.g. "http://127.0.0.1:41234", the simulator's URL).
// httpClient nil uses a client that never goes through a proxy (the admin API must be addressed directly)
// and times out after 10s.
func New(baseURL string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), http: httpClient}
}

// StatusError is returned for an answer other than the expected 2xx; Message is the simulator's error text.
type StatusError struct {
	StatusCode int
	Message    string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("simulator admin API: %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// IsNotFound reports whether err is a 404 from the simulator (unknown cluster, member, store, pod, Pump
// node or fault).
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.StatusCode == http.StatusNotFound
}

// Clusters lists the simulated clusters.
func (c *Client) Clusters(ctx context.Context) ([]api.ClusterSummary, error) {
	var out []api.ClusterSummary
	return out, c.do(ctx, http.MethodGet, "/clusters", nil, &out)
}

// Cluster returns the whole state of cluster namespace/name; a 404 StatusError when it is unknown.
func (c *Client) Cluster(ctx context.Context, namespace, name string) (*api.ClusterState, error) {
	var out api.ClusterState
	if err := c.do(ctx, http.MethodGet, clusterPath(namespace, name, ""), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetClusterConfig changes max-replicas, the region count and/or the TiCDC table count of a cluster
// (created if unknown) and returns the resulting configuration.
func (c *Client) SetClusterConfig(ctx context.Context, namespace, name string, upd api.ClusterConfigUpdate) (*api.ClusterConfig, error) {
	var out api.ClusterConfig
	if err := c.do(ctx, http.MethodPut, clusterPath(namespace, name, "/config"), upd, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetMemberUnhealthy marks PD member (pod name) unhealthy, or clears the mark; 404 when unknown.
func (c *Client) SetMemberUnhealthy(ctx context.Context, namespace, name, member string, unhealthy bool) error {
	return c.do(ctx, putOrDelete(unhealthy), clusterPath(namespace, name, "/members/"+url.PathEscape(member)+"/unhealthy"), nil, nil)
}

// SetStoreDown forces store id Down (no heartbeats, reported Down at once), or clears it; 404 when unknown.
func (c *Client) SetStoreDown(ctx context.Context, namespace, name string, id uint64, down bool) error {
	return c.do(ctx, putOrDelete(down), clusterPath(namespace, name, "/stores/"+strconv.FormatUint(id, 10)+"/down"), nil, nil)
}

// SetCaptureUnhealthy marks the TiCDC capture of pod unhealthy (its processor is not initialized: the
// owner reports the TiCDC cluster unhealthy and refuses drains), or clears the mark; 404 when the cluster
// has no TiCDC pod of that name.
func (c *Client) SetCaptureUnhealthy(ctx context.Context, namespace, name, pod string, unhealthy bool) error {
	return c.do(ctx, putOrDelete(unhealthy), clusterPath(namespace, name, "/captures/"+url.PathEscape(pod)+"/unhealthy"), nil, nil)
}

// SetTiProxyUnhealthy marks the TiProxy server of pod unhealthy (its API answers 500 "service not
// ready"), or clears the mark; 404 when the cluster has no TiProxy pod of that name.
func (c *Client) SetTiProxyUnhealthy(ctx context.Context, namespace, name, pod string, unhealthy bool) error {
	return c.do(ctx, putOrDelete(unhealthy), clusterPath(namespace, name, "/tiproxy-servers/"+url.PathEscape(pod)+"/unhealthy"), nil, nil)
}

// SetTiDBUnhealthy marks the TiDB server of pod unhealthy (its `GET /status` answers 500), or clears the
// mark; 404 when the cluster has no TiDB pod of that name.
func (c *Client) SetTiDBUnhealthy(ctx context.Context, namespace, name, pod string, unhealthy bool) error {
	return c.do(ctx, putOrDelete(unhealthy), clusterPath(namespace, name, "/tidb-servers/"+url.PathEscape(pod)+"/unhealthy"), nil, nil)
}

// SetPumpNodeState writes the Pump registry state of node nodeID (`<pod>:8250`) as `binlogctl -cmd
// update-pump -state <state>` does, and returns the entry; a serving online pump writes its own state back
// with its next heartbeat. A 404 StatusError when the registry has no such node, 400 for an unknown state.
func (c *Client) SetPumpNodeState(ctx context.Context, namespace, name, nodeID, state string) (*api.PumpNode, error) {
	var out api.PumpNode
	path := clusterPath(namespace, name, "/pump-nodes/"+url.PathEscape(nodeID)+"/state")
	if err := c.do(ctx, http.MethodPut, path, api.PumpNodeStateUpdate{State: state}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetPDUnreachable makes every PD address of the cluster refuse connections, or restores them.
func (c *Client) SetPDUnreachable(ctx context.Context, namespace, name string, unreachable bool) error {
	return c.do(ctx, putOrDelete(unreachable), clusterPath(namespace, name, "/pd-unreachable"), nil, nil)
}

// TiFlashReplicas lists the tables with TiFlash replicas of cluster namespace/name (PD's placement rules
// of group "tiflash"); a 404 StatusError when the cluster is unknown.
func (c *Client) TiFlashReplicas(ctx context.Context, namespace, name string) ([]api.TiFlashReplica, error) {
	var out []api.TiFlashReplica
	return out, c.do(ctx, http.MethodGet, clusterPath(namespace, name, "/tiflash-replicas"), nil, &out)
}

// SetTiFlashReplicas sets the TiFlash replica count of table tableID as `ALTER TABLE … SET TIFLASH REPLICA
// count` would (0 removes the table's rule) and returns every table's; a 409 StatusError while PD's
// placement rules are disabled, 404 when the cluster is unknown, 400 for a negative count.
func (c *Client) SetTiFlashReplicas(ctx context.Context, namespace, name string, tableID int64, count int) ([]api.TiFlashReplica, error) {
	var out []api.TiFlashReplica
	path := clusterPath(namespace, name, "/tiflash-replicas/"+strconv.FormatInt(tableID, 10))
	return out, c.do(ctx, http.MethodPut, path, api.TiFlashReplicaUpdate{Count: count}, &out)
}

// AddFault injects f into the cluster's simulated APIs and returns it with its ID; a 400 StatusError
// explains an invalid fault.
func (c *Client) AddFault(ctx context.Context, namespace, name string, f api.Fault) (*api.Fault, error) {
	var out api.Fault
	if err := c.do(ctx, http.MethodPost, clusterPath(namespace, name, "/faults"), f, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Faults lists the cluster's active faults with their hit counts.
func (c *Client) Faults(ctx context.Context, namespace, name string) ([]api.Fault, error) {
	var out []api.Fault
	return out, c.do(ctx, http.MethodGet, clusterPath(namespace, name, "/faults"), nil, &out)
}

// DeleteFault removes one fault; 404 when it is unknown (or already expired).
func (c *Client) DeleteFault(ctx context.Context, namespace, name, id string) error {
	return c.do(ctx, http.MethodDelete, clusterPath(namespace, name, "/faults/"+url.PathEscape(id)), nil, nil)
}

// ClearFaults removes every fault of the cluster.
func (c *Client) ClearFaults(ctx context.Context, namespace, name string) error {
	return c.do(ctx, http.MethodDelete, clusterPath(namespace, name, "/faults"), nil, nil)
}

// Timings returns the simulator-wide timings.
func (c *Client) Timings(ctx context.Context) (*api.Timings, error) {
	var out api.Timings
	if err := c.do(ctx, http.MethodGet, "/timings", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetTimings changes the timings named in upd and returns all of them.
func (c *Client) SetTimings(ctx context.Context, upd api.TimingsUpdate) (*api.Timings, error) {
	var out api.Timings
	if err := c.do(ctx, http.MethodPut, "/timings", upd, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetClusterTimings gives cluster namespace/name timings of its own: the durations named in upd over its
// current ones (the simulator-wide ones until the first call); the simulator-wide timings and the other
// clusters are left alone. It returns the cluster's timings; a negative duration is a 400 StatusError.
func (c *Client) SetClusterTimings(ctx context.Context, namespace, name string, upd api.TimingsUpdate) (*api.Timings, error) {
	var out api.Timings
	if err := c.do(ctx, http.MethodPut, clusterPath(namespace, name, "/timings"), upd, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func putOrDelete(set bool) string {
	if set {
		return http.MethodPut
	}
	return http.MethodDelete
}

func clusterPath(namespace, name, suffix string) string {
	return "/clusters/" + url.PathEscape(namespace) + "/" + url.PathEscape(name) + suffix
}

// do sends one request and decodes a 2xx answer into out (when not nil); other answers become a
// StatusError, transport failures are wrapped.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+api.PathPrefix+path, body)
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("read %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var apiErr api.Error
		if json.Unmarshal(data, &apiErr) != nil || apiErr.Error == "" {
			apiErr.Error = strings.TrimSpace(string(data))
		}
		return &StatusError{StatusCode: resp.StatusCode, Message: apiErr.Error}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}
