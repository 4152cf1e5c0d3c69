// Package podhttp is the request path the operator's clients of one pod's status port share (tidbapi,
// tikvapi, tiflashapi): how such a pod is addressed through its component's peer Service, one bounded
// bodiless request to it, how a failed answer is worded, and the per-pod state of their fakes. It knows
// no component's API: each client package keeps its paths, the meaning of an answer, its sentinel errors,
// and records the stack where an error leaves it (pdapi.Trace).
package podhttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Options says how to reach the pods of one TidbCluster.
type Options struct {
	// TLSEnabled selects https and the cluster client certificate (spec.tlsCluster.enabled).
	TLSEnabled bool
	// ClusterDomain, when set, makes host names fully qualified: "….<ns>.svc.<ClusterDomain>".
	ClusterDomain string
}

// HTTPClients returns the *http.Client for the pods of a TidbCluster; *pdapi.HTTPClientCache implements
// it (shared with the PD control, so one TLS cache serves the cluster and HTTP_PROXY is honoured).
type HTTPClients interface {
	Get(namespace, tcName string, tlsEnabled bool) (*http.Client, error)
}

// Port is the status port of one component's pods, which the operator reaches through the component's
// peer (headless) Service.
type Port struct {
	// Component is the component's name in object names, e.g. names.TiKV.
	Component string
	// Number is the port number.
	Number int
}

// URL returns the base URL of the port on pod podName of TidbCluster namespace/tcName:
// "<scheme>://<pod>.<tc>-<component>-peer.<ns>[.svc.<domain>]:<port>", https when opts.TLSEnabled.
func (p Port) URL(namespace, tcName, podName string, opts Options) string {
	host := podName + "." + names.ServiceHost(names.Peer(tcName, p.Component), namespace, opts.ClusterDomain)
	return fmt.Sprintf("%s://%s:%d", names.Scheme(opts.TLSEnabled), host, p.Number)
}

// Request is one request to a pod, bodiless unless Body is set.
type Request struct {
	// Body, when not nil, is sent as the request's JSON body (TiDB's POST /labels).
	Body []byte
	// Method is the HTTP method, e.g. http.MethodGet.
	Method string
	// URL is the full URL, from Port.URL and a path.
	URL string
	// Namespace and TCName name the TidbCluster whose *http.Client sends the request; TLSEnabled picks
	// its TLS client.
	Namespace, TCName string
	TLSEnabled        bool
}

// NewRequest returns the bodiless request method url to a pod of TidbCluster namespace/tcName, sent
// through the cluster's TLS client when opts.TLSEnabled.
func NewRequest(method, url, namespace, tcName string, opts Options) Request {
	return Request{Method: method, URL: url, Namespace: namespace, TCName: tcName, TLSEnabled: opts.TLSEnabled}
}

// Client sends one Request per call. Calls do not retry; each is bounded by its ctx and the client's
// timeout. Safe for concurrent use.
type Client struct {
	httpClients HTTPClients
	timeout     time.Duration
	maxBody     int64
}

// NewClient returns a Client that sends through httpClients, bounds each request by timeout
// (defaultTimeout when timeout ≤ 0), and reads at most maxBody bytes of each answer's body.
func NewClient(httpClients HTTPClients, timeout, defaultTimeout time.Duration, maxBody int64) *Client {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	return &Client{httpClients: httpClients, timeout: timeout, maxBody: maxBody}
}

// UnreachableError is a request that got no complete answer: dial, TLS, timeout, reset, or a body cut
// short. Its message is its cause's, which names the method and URL.
type UnreachableError struct{ Err error }

// Error returns the cause's message.
func (e *UnreachableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause, e.g. a *url.Error wrapping context.DeadlineExceeded.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Do sends req and passes the answer's status and body (at most the client's maxBody bytes) to read,
// while the request's deadline still holds; the body is closed afterwards. It returns read's error, an
// error of the HTTPClients or of building the request, or an *UnreachableError when no answer came.
// read is not called then.
func (c *Client) Do(ctx context.Context, req Request, read func(status int, body io.Reader) error) error {
	httpClient, err := c.httpClients.Get(req.Namespace, req.TCName, req.TLSEnabled)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	httpReq, err := http.NewRequestWithContext(ctx, req.Method, req.URL, body)
	if err != nil {
		return err
	}
	if req.Body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(httpReq)
	if err != nil {
		return &UnreachableError{Err: err} // *url.Error names method and URL
	}
	defer func() { _ = resp.Body.Close() }()
	return read(resp.StatusCode, io.LimitReader(resp.Body, c.maxBody))
}

// ReadAll is Do reading the whole body (at most maxBody bytes): it returns the answer's status and body,
// whatever the status. A body that cannot be read is an *UnreachableError naming method and URL.
func (c *Client) ReadAll(ctx context.Context, req Request) (int, []byte, error) {
	var (
		status int
		body   []byte
	)
	err := c.Do(ctx, req, func(s int, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return &UnreachableError{Err: fmt.Errorf("%s %s: read body: %w", req.Method, req.URL, err)}
		}
		status, body = s, b
		return nil
	})
	return status, body, err
}

// StatusError is the error for an answer whose status the caller does not accept:
// "<method> <url>: <status> <status text>: <start of body>".
func StatusError(method, url string, status int, body []byte) error {
	return fmt.Errorf("%s %s: %d %s: %s", method, url, status, http.StatusText(status), Snippet(body))
}

// snippetBytes is how much of a body an error message or log quotes.
const snippetBytes = 256

// Snippet is the start of a body, trimmed, for an error message or log: at most 256 bytes, then "…".
func Snippet(body []byte) string {
	text := strings.TrimSpace(string(body))
	if len(text) > snippetBytes {
		return text[:snippetBytes] + "…"
	}
	return text
}
