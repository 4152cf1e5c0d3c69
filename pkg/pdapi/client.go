package pdapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultTimeout bounds every PD request (connect, send, read the whole body), as in TiDB Operator v1.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds a PD response body; a store list of a large cluster is a few MB.
const maxBodyBytes = 64 << 20

// Reader is the read half of the PD HTTP API (spec §5). No method retries: every call is one HTTP
// request bounded by ctx and the client timeout, and the caller (a reconcile) retries by requeueing.
// Errors wrap a *StatusError for an unexpected HTTP status, the transport error otherwise, or a decode
// error for a malformed body.
type Reader interface {
	// GetHealth returns the health of every PD member (`GET /pd/api/v1/health`).
	GetHealth(ctx context.Context) (HealthInfo, error)
	// GetCluster returns the cluster metadata, whose ID labels pods and PVCs (`GET /pd/api/v1/cluster`).
	GetCluster(ctx context.Context) (*Cluster, error)
	// GetMembers returns the PD members with the leader (`GET /pd/api/v1/members`).
	GetMembers(ctx context.Context) (*MembersInfo, error)
	// GetLeader returns the PD leader (`GET /pd/api/v1/leader`).
	GetLeader(ctx context.Context) (*Member, error)
	// GetStores returns the Up, Offline (and Down/Disconnected) stores, never Tombstone ones
	// (`GET /pd/api/v1/stores`). Before the first TiKV registers it fails with ErrTiKVNotBootstrapped.
	// Every returned StoreInfo has a non-nil Store and Status.
	GetStores(ctx context.Context) (*StoresInfo, error)
	// GetTombstoneStores returns the Tombstone stores (`GET /pd/api/v1/stores?state=2`); same guarantees
	// and errors as GetStores.
	GetTombstoneStores(ctx context.Context) (*StoresInfo, error)
	// GetStore returns one store in any state (`GET /pd/api/v1/store/{id}`); an unknown ID fails with
	// ErrNotFound.
	GetStore(ctx context.Context, storeID uint64) (*StoreInfo, error)
	// GetConfig returns PD's configuration (`GET /pd/api/v1/config`); the operator reads
	// Replication.MaxReplicas, Replication.LocationLabels and Replication.EnablePlacementRules.
	GetConfig(ctx context.Context) (*Config, error)
	// GetReady reports whether the PD member this client addresses is ready to serve
	// (`GET /pd/api/v2/ready`, PD ≥ 8.5.2): 200 ⇒ true; 500 (PD's "not ready") ⇒ false with a nil error;
	// 404 ⇒ true, because older PDs lack the API and must not block an upgrade. Use a member client
	// (ClusterOptions.Member): through the Service the answer is some member's.
	GetReady(ctx context.Context) (bool, error)
	// GetEvictLeaderSchedulers returns the IDs (ascending) of the stores that have an evict-leader
	// scheduler (`GET /pd/api/v1/schedulers`; a bare "evict-leader-scheduler", as newer PDs list it, is
	// expanded through `GET /pd/api/v1/scheduler-config/evict-leader-scheduler/list`).
	GetEvictLeaderSchedulers(ctx context.Context) ([]uint64, error)
	// GetPlacementRules returns the placement rules of group, e.g. PlacementGroupTiFlash
	// (`GET /pd/api/v1/config/rules/group/{group}`); an empty group is an empty slice. While placement rules
	// are disabled PD answers 412, an error wrapping ErrPlacementRulesDisabled; before the first TiKV
	// registers, ErrTiKVNotBootstrapped; a PD without the API, ErrNotFound.
	GetPlacementRules(ctx context.Context, group string) ([]PlacementRule, error)
	// MaxTiFlashReplicas returns the largest TiFlash replica count of any table: the largest `count` among
	// the rules of group "tiflash", 0 when there is none. Because PD keeps no rule in force while placement
	// rules are disabled (412) or lacks the API (404), both are 0 with a nil error; a TiFlash scale-in that
	// leaves fewer Up TiFlash stores than this never completes (the Offline stores cannot move their
	// replicas). Before the first TiKV registers it fails with ErrTiKVNotBootstrapped.
	MaxTiFlashReplicas(ctx context.Context) (int, error)
}

// Writer is the write half of the PD HTTP API (spec §5). Every method is idempotent: it succeeds when
// the wanted state already holds (the member or store is absent, the scheduler exists or is gone), so a
// reconcile may simply call it again. No method retries.
type Writer interface {
	// TransferPDLeader asks PD to move its leadership to the named member
	// (`POST /pd/api/v1/leader/transfer/{name}`); 200 and 404 are success. The transfer is asynchronous:
	// check GetLeader afterwards.
	TransferPDLeader(ctx context.Context, memberName string) error
	// DeleteMember removes a PD member by name (`DELETE /pd/api/v1/members/name/{name}`); an absent
	// member (404) is success.
	DeleteMember(ctx context.Context, name string) error
	// DeleteMemberByID removes a PD member by ID (`DELETE /pd/api/v1/members/id/{id}`). PD answers 500 for
	// an unknown ID, so the member list is read first and an absent member is success.
	DeleteMemberByID(ctx context.Context, memberID uint64) error
	// DeleteStore starts taking a store offline (`DELETE /pd/api/v1/store/{id}`); the store becomes
	// Tombstone once its regions have moved. An unknown (404) or already removed (410) store is success.
	DeleteStore(ctx context.Context, storeID uint64) error
	// SetStoreState sets a store's state, "Up" or "Offline" (`POST /pd/api/v1/store/{id}/state?state=`).
	SetStoreState(ctx context.Context, storeID uint64, state string) error
	// SetStoreLabels merges labels into a store's labels (`POST /pd/api/v1/store/{id}/label`).
	SetStoreLabels(ctx context.Context, storeID uint64, labels map[string]string) error
	// BeginEvictLeader adds an evict-leader scheduler for a store (`POST /pd/api/v1/schedulers`). PD
	// answers an error when the scheduler already exists, so any non-200 answer is success if the store is
	// then listed by GetEvictLeaderSchedulers.
	BeginEvictLeader(ctx context.Context, storeID uint64) error
	// EndEvictLeader removes a store's evict-leader scheduler
	// (`DELETE /pd/api/v1/schedulers/evict-leader-scheduler-{id}`); 404 is success. On any other answer
	// the schedulers are listed again and it fails if the store is still listed.
	EndEvictLeader(ctx context.Context, storeID uint64) error
	// UpdateReplicationConfig changes the fields of PD's replication config that update sets
	// (`POST /pd/api/v1/config/replicate`); unset fields keep their value.
	UpdateReplicationConfig(ctx context.Context, update ReplicationConfigUpdate) error
	// EnablePlacementRules turns replication.enable-placement-rules on, which TiFlash needs (PD refuses to
	// register a TiFlash store without it): `POST /pd/api/v1/config/replicate` with
	// {"enable-placement-rules":"true"} (a JSON string, as PD requires). It always sends; read GetConfig
	// first to write only when needed. PD answers 500 ErrTiKVNotBootstrapped when the value would change
	// before the first TiKV registered.
	EnablePlacementRules(ctx context.Context) error
}

// Client is the PD HTTP API the operator uses. Implementations are safe for concurrent use.
type Client interface {
	Reader
	Writer
}

// pdClient is the Client over HTTP.
type pdClient struct {
	// baseURL is "<scheme>://<host>:<port>" without a trailing slash.
	baseURL string
	// httpClient returns the client to send with; it errors when none can be had (no TLS material).
	httpClient func() (*http.Client, error)
	// timeout, when > 0, bounds each request through a context deadline.
	timeout time.Duration
}

// NewClient returns a Client for the PD at baseURL (e.g. "http://basic-pd.ns:2379"). Each request is
// bounded by timeout (DefaultTimeout when ≤ 0). tlsConfig, when non-nil, is used for https and disables
// keep-alive. The transport honours HTTP_PROXY/HTTPS_PROXY/NO_PROXY, which is how tests reach a PD
// simulator through cluster DNS names.
func NewClient(baseURL string, timeout time.Duration, tlsConfig *tls.Config) Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return NewClientWithHTTP(baseURL, &http.Client{Timeout: timeout, Transport: NewTransport(tlsConfig)})
}

// NewClientWithHTTP returns a Client for the PD at baseURL that sends requests through httpClient, whose
// Timeout should be set; it exists for callers (and tests) that need their own transport.
func NewClientWithHTTP(baseURL string, httpClient *http.Client) Client {
	return &pdClient{
		baseURL:    strings.TrimSuffix(baseURL, "/"),
		httpClient: func() (*http.Client, error) { return httpClient, nil },
	}
}

// response is one PD answer.
type response struct {
	method, url string
	status      int
	body        []byte
}

// statusError is the error for an unexpected status of r.
func (r *response) statusError() error { return newStatusError(r.method, r.url, r.status, r.body) }

// decode unmarshals the body into out; a malformed body is an error naming the request.
func (r *response) decode(out any) error {
	if err := json.Unmarshal(r.body, out); err != nil {
		return fmt.Errorf("%s %s: decode %T: %w", r.method, r.url, out, err)
	}
	return nil
}

// send performs one request with an optional JSON body. It errors only when no complete answer arrived
// (bad request, transport failure, timeout, body over maxBodyBytes); any status is returned as is.
func (c *pdClient) send(ctx context.Context, method, path string, in any) (*response, error) {
	url := c.baseURL + path
	httpClient, err := c.httpClient()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode body: %w", method, url, err)
		}
		body = bytes.NewReader(data)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err // *url.Error names method and URL
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	if len(data) > maxBodyBytes {
		return nil, fmt.Errorf("%s %s: body exceeds %d bytes", method, url, maxBodyBytes)
	}
	return &response{method: method, url: url, status: resp.StatusCode, body: data}, nil
}

// getJSON GETs path and decodes a 200 answer into out; any other status is a *StatusError.
func (c *pdClient) getJSON(ctx context.Context, path string, out any) error {
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if resp.status != http.StatusOK {
		return resp.statusError()
	}
	return resp.decode(out)
}

// write sends a write request and succeeds when PD answers 200 or one of okCodes; any other status is a
// *StatusError.
func (c *pdClient) write(ctx context.Context, method, path string, in any, okCodes ...int) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	if resp.status == http.StatusOK || containsCode(okCodes, resp.status) {
		return nil
	}
	return resp.statusError()
}

func containsCode(codes []int, code int) bool {
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// wrap prefixes err with the Client method that failed and records the stack there (Trace), keeping the
// cause for errors.Is/As: it is the one boundary where every Client error leaves the package.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return Trace(fmt.Errorf("pd %s: %w", op, err))
}
