// Package podhttptest serves pods' status ports to the tests of the per-pod clients (tidbapi, tikvapi,
// tiflashapi) the way the operator meets them: behind an HTTP proxy, as HTTP_PROXY makes the operator's
// clients do and the simulator serves. Test support only.
package podhttptest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp"
)

// Pods are the pods of one component behind a proxy.
type Pods struct {
	// PeerHost is "<tc>-<component>-peer.<ns>:<port>": the proxy passes a request for host
	// "<pod>.<PeerHost>" to Handlers[<pod>], and refuses any other host or a pod without a handler
	// (502 Bad Gateway, as for a refused connection).
	PeerHost string
	// Paths, when set, are the only paths the pods serve; another is answered 404 Not Found, as TiDB,
	// TiKV and TiFlash do.
	Paths []string
	// Handlers answer per pod name.
	Handlers map[string]http.HandlerFunc
}

// Serve starts the proxy until t ends and returns Plain HTTPClients whose client sends through it.
func (p Pods) Serve(t testing.TB) podhttp.HTTPClients {
	t.Helper()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pod, peerHost, _ := strings.Cut(r.Host, ".")
		handler := p.Handlers[pod]
		switch {
		case !r.URL.IsAbs() || peerHost != p.PeerHost || handler == nil:
			http.Error(w, "dial "+r.Host+": connection refused", http.StatusBadGateway)
		case len(p.Paths) > 0 && !slices.Contains(p.Paths, r.URL.Path):
			http.NotFound(w, r)
		default:
			handler(w, r)
		}
	}))
	t.Cleanup(proxy.Close)
	proxyURL, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	transport := pdapi.NewTransport(nil)
	transport.Proxy = http.ProxyURL(proxyURL)
	return Plain(&http.Client{Transport: transport, Timeout: 5 * time.Second})
}

// Plain returns HTTPClients that hand out client for every cluster and fail when asked for a TLS
// client, with "no TLS in this test".
func Plain(client *http.Client) podhttp.HTTPClients { return plainOnly{client: client} }

type plainOnly struct{ client *http.Client }

func (p plainOnly) Get(_, _ string, tlsEnabled bool) (*http.Client, error) {
	if tlsEnabled {
		return nil, errors.New("no TLS in this test")
	}
	return p.client, nil
}

// Answer returns a handler that answers status with body, as the pods do: the bare text, no newline
// added.
func Answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// BlockUntilCanceled is a handler that never answers: it returns when the request is canceled.
func BlockUntilCanceled(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
