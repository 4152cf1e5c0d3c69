// Package dmapi is the operator's client of dm-master's HTTP API (port 8261) for one DMCluster: the
// members (`GET /apis/v1alpha1/members?master=true|worker=true|leader=true`) through the client Service
// `<dc>-dm-master`, leader eviction (`PUT /apis/v1alpha1/leader/1`) on the peer address of the pod
// giving leadership up, and member removal (`DELETE /apis/v1alpha1/members/master|worker/<name>`).
package dmapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Port is dm-master's client port, which serves the HTTP API.
const Port = 8261

// DefaultTimeout bounds one request, as the TiDB Operator's dm-master client does.
const DefaultTimeout = 5 * time.Second

// maxBodyBytes bounds an answer; a member list is a few hundred bytes per member.
const maxBodyBytes = 1 << 20

// The paths of the calls, relative to the base URL.
const (
	PathMembers       = "/apis/v1alpha1/members"
	PathEvictLeader   = "/apis/v1alpha1/leader/1"
	PathMasterMembers = "/apis/v1alpha1/members/master/"
	PathWorkerMembers = "/apis/v1alpha1/members/worker/"
)

// Options says how to reach the dm-master of one DMCluster.
type Options struct {
	// TLSEnabled selects https and the client certificate of Secret `<dc>-dm-client-secret`
	// (spec.tlsCluster.enabled).
	TLSEnabled bool
}

// HTTPClients returns the *http.Client for a DMCluster (namespace, DMCluster name, TLS);
// *pdapi.HTTPClientCache implements it.
type HTTPClients = podhttp.HTTPClients

// ErrInvalidResponse is returned (wrapped) when an answer's `members` does not hold exactly one list of
// the kind asked for.
var ErrInvalidResponse = errors.New("invalid dm-master members response")

// ErrNotMasterPod is returned (wrapped) by EvictLeader for a pod that is not a dm-master pod of the
// client's DMCluster.
var ErrNotMasterPod = errors.New("not a dm-master pod of this DMCluster")

// RefusedError is dm-master answering a call with `"result": false`; Msg is its explanation.
type RefusedError struct {
	// Call is the method and URL, e.g. "DELETE http://basic-dm-master.ns:8261/apis/v1alpha1/members/worker/w".
	Call string
	// Msg is dm-master's msg.
	Msg string
}

// Error renders "<call>: dm-master refused: <msg>".
func (e *RefusedError) Error() string { return e.Call + ": dm-master refused: " + e.Msg }

// Client calls the dm-master of one DMCluster. Calls do not retry; each is bounded by ctx and the client
// timeout. Every error names the call, carries the stack of the failed call (pdapi.Trace) and unwraps to
// its cause: *podhttp.UnreachableError when no answer came, an HTTP status of 400 or more quoting the
// body, *RefusedError for `result: false`, ErrInvalidResponse for a malformed member list. Safe for
// concurrent use.
type Client interface {
	// GetMasters lists the dm-master members through the client Service.
	GetMasters(ctx context.Context) ([]MasterMember, error)
	// GetWorkers lists the dm-workers registered with dm-master through the client Service.
	GetWorkers(ctx context.Context) ([]WorkerMember, error)
	// GetLeader returns the dm-master leader through the client Service; Name is empty when dm-master
	// answers without one.
	GetLeader(ctx context.Context) (Leader, error)
	// EvictLeader makes the dm-master of pod podName give leadership up. dm-master evicts the member
	// that serves the request, so the call goes to the pod's own peer address
	// ("<pod>.<dc>-dm-master-peer.<ns>:8261"), never the Service; a pod that is not "<dc>-dm-master-<n>"
	// is ErrNotMasterPod, without a request.
	EvictLeader(ctx context.Context, podName string) error
	// DeleteMaster removes member name from the dm-master cluster.
	DeleteMaster(ctx context.Context, name string) error
	// DeleteWorker removes the registration of worker name; dm-master refuses it while the worker is
	// not offline.
	DeleteWorker(ctx context.Context, name string) error
}

// ServiceURL is "<scheme>://<dc>-dm-master.<ns>:8261", dm-master's client Service.
func ServiceURL(namespace, dcName string, opts Options) string {
	return fmt.Sprintf("%s://%s.%s:%d", names.Scheme(opts.TLSEnabled), names.DMMaster(dcName), namespace, Port)
}

// PeerURL is "<scheme>://<pod>.<dc>-dm-master-peer.<ns>:8261", one dm-master pod's API.
func PeerURL(namespace, dcName, podName string, opts Options) string {
	return fmt.Sprintf("%s://%s.%s.%s:%d", names.Scheme(opts.TLSEnabled), podName, names.DMMasterPeer(dcName), namespace, Port)
}

// client is the Client over HTTP for one DMCluster.
type client struct {
	http              *podhttp.Client
	namespace, dcName string
	opts              Options
}

// NewClient returns the Client of DMCluster namespace/dcName sending through httpClients, each request
// bounded by timeout (DefaultTimeout when ≤ 0).
func NewClient(httpClients HTTPClients, namespace, dcName string, opts Options, timeout time.Duration) Client {
	return &client{
		http:      podhttp.NewClient(httpClients, timeout, DefaultTimeout, maxBodyBytes),
		namespace: namespace, dcName: dcName, opts: opts,
	}
}

// GetMasters implements Client.
func (c *client) GetMasters(ctx context.Context) ([]MasterMember, error) {
	list, err := c.list(ctx, "master")
	if err == nil && list.Master == nil {
		err = fmt.Errorf("%w: no master list", ErrInvalidResponse)
	}
	if err != nil {
		return nil, pdapi.Trace(fmt.Errorf("dm-master GetMasters: %w", err))
	}
	return list.Master.Masters, nil
}

// GetWorkers implements Client.
func (c *client) GetWorkers(ctx context.Context) ([]WorkerMember, error) {
	list, err := c.list(ctx, "worker")
	if err == nil && list.Worker == nil {
		err = fmt.Errorf("%w: no worker list", ErrInvalidResponse)
	}
	if err != nil {
		return nil, pdapi.Trace(fmt.Errorf("dm-master GetWorkers: %w", err))
	}
	return list.Worker.Workers, nil
}

// GetLeader implements Client.
func (c *client) GetLeader(ctx context.Context) (Leader, error) {
	list, err := c.list(ctx, "leader")
	if err == nil && list.Leader == nil {
		err = fmt.Errorf("%w: no leader", ErrInvalidResponse)
	}
	if err != nil {
		return Leader{}, pdapi.Trace(fmt.Errorf("dm-master GetLeader: %w", err))
	}
	return *list.Leader, nil
}

// EvictLeader implements Client.
func (c *client) EvictLeader(ctx context.Context, podName string) error {
	err := c.checkMasterPod(podName)
	if err == nil {
		_, err = c.send(ctx, http.MethodPut, PeerURL(c.namespace, c.dcName, podName, c.opts)+PathEvictLeader)
	}
	if err != nil {
		return pdapi.Trace(fmt.Errorf("dm-master EvictLeader %s: %w", podName, err))
	}
	return nil
}

// DeleteMaster implements Client.
func (c *client) DeleteMaster(ctx context.Context, name string) error {
	u := ServiceURL(c.namespace, c.dcName, c.opts) + PathMasterMembers + url.PathEscape(name)
	if _, err := c.send(ctx, http.MethodDelete, u); err != nil {
		return pdapi.Trace(fmt.Errorf("dm-master DeleteMaster %s: %w", name, err))
	}
	return nil
}

// DeleteWorker implements Client.
func (c *client) DeleteWorker(ctx context.Context, name string) error {
	u := ServiceURL(c.namespace, c.dcName, c.opts) + PathWorkerMembers + url.PathEscape(name)
	if _, err := c.send(ctx, http.MethodDelete, u); err != nil {
		return pdapi.Trace(fmt.Errorf("dm-master DeleteWorker %s: %w", name, err))
	}
	return nil
}

// checkMasterPod errors unless podName is "<dc>-dm-master-<n>".
func (c *client) checkMasterPod(podName string) error {
	ordinal, ok := strings.CutPrefix(podName, names.DMMaster(c.dcName)+"-")
	if !ok || ordinal == "" || strings.Trim(ordinal, "0123456789") != "" {
		return fmt.Errorf("%q: %w %s/%s", podName, ErrNotMasterPod, c.namespace, c.dcName)
	}
	return nil
}

// list asks the Service for the member list of kind (master, worker or leader) and returns its only
// element.
func (c *client) list(ctx context.Context, kind string) (memberList, error) {
	env, err := c.send(ctx, http.MethodGet, ServiceURL(c.namespace, c.dcName, c.opts)+PathMembers+"?"+kind+"=true")
	if err != nil {
		return memberList{}, err
	}
	if len(env.Members) != 1 {
		return memberList{}, fmt.Errorf("%w: %d member lists, want 1", ErrInvalidResponse, len(env.Members))
	}
	return env.Members[0], nil
}

// send sends one bodiless request and decodes the envelope; an HTTP status of 400 or more, an
// undecodable body or `result: false` is an error.
func (c *client) send(ctx context.Context, method, u string) (envelope, error) {
	req := podhttp.Request{Method: method, URL: u, Namespace: c.namespace, TCName: c.dcName, TLSEnabled: c.opts.TLSEnabled}
	status, body, err := c.http.ReadAll(ctx, req)
	if err != nil {
		return envelope{}, err
	}
	if status >= http.StatusBadRequest {
		return envelope{}, podhttp.StatusError(method, u, status, body)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return envelope{}, fmt.Errorf("%s %s: decode %q: %w", method, u, podhttp.Snippet(body), err)
	}
	if !env.Result {
		return envelope{}, &RefusedError{Call: method + " " + u, Msg: env.Msg}
	}
	return env, nil
}
