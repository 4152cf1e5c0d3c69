//go:build integration

package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// pdProxy is the HTTP proxy every operator of the suite is pointed at (HTTP_PROXY). It sits between
// the operator and the per-scenario simulators: it dispatches each PD/TiKV/TiDB request to the
// simulator of the namespace named in its host, lets the invariant checker judge a PD write before it
// is forwarded, counts answers that failed (so a scenario can wait until the operator has *observed* a
// fault), and can answer reads with stale data (the last answer recorded before the fault started).
type pdProxy struct {
	srv *http.Server
	ln  net.Listener

	mu     sync.Mutex
	routes map[string]*route // by namespace
}

// route is one namespace's simulator and the proxy's state for it.
type route struct {
	target *httputil.ReverseProxy
	// beforeWrite, when set, sees every non-GET request before it is forwarded.
	beforeWrite func(r *http.Request)

	requests      atomic.Int64
	failed        atomic.Int64 // transport errors and 5xx answers
	memberDeletes atomic.Int64 // DELETE /pd/api/v1/members/...
	stale         atomic.Bool

	mu    sync.Mutex
	cache map[string]cached // last 200 answer of each GET URL
}

type cached struct {
	header http.Header
	body   []byte
}

func startPDProxy() (*pdProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	p := &pdProxy{ln: ln, routes: map[string]*route{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's address for HTTP_PROXY.
func (p *pdProxy) URL() string { return "http://" + p.ln.Addr().String() }

// register routes namespace to the simulator at simURL (itself an HTTP proxy) until the returned
// function is called.
func (p *pdProxy) register(namespace, simURL string) (*route, func(), error) {
	target, err := url.Parse(simURL)
	if err != nil {
		return nil, nil, fmt.Errorf("simulator URL: %w", err)
	}
	rt := &route{cache: map[string]cached{}}
	rt.target = &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.Host },
		Transport:      &http.Transport{Proxy: http.ProxyURL(target), MaxIdleConnsPerHost: 32},
		ModifyResponse: rt.record,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			rt.failed.Add(1)
			http.Error(w, "faults proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.mu.Lock()
	p.routes[namespace] = rt
	p.mu.Unlock()
	return rt, func() {
		p.mu.Lock()
		delete(p.routes, namespace)
		p.mu.Unlock()
	}, nil
}

func (p *pdProxy) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Host == "" {
		http.Error(w, "faults proxy: expected an absolute URL", http.StatusBadRequest)
		return
	}
	rt := p.routeOf(r.URL.Hostname())
	if rt == nil {
		http.Error(w, "faults proxy: no simulator for host "+r.URL.Host, http.StatusBadGateway)
		return
	}
	rt.requests.Add(1)
	if r.Method == http.MethodGet && r.URL.Port() == "2379" && rt.stale.Load() && rt.serveStale(w, r) {
		return
	}
	if r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/pd/api/v1/members/") {
		rt.memberDeletes.Add(1)
	}
	if r.Method != http.MethodGet && rt.beforeWrite != nil {
		rt.beforeWrite(r)
	}
	rt.target.ServeHTTP(w, r)
}

// routeOf finds the namespace among the host's dot-separated labels
// ("basic-pd.ns", "basic-pd-0.basic-pd-peer.ns.svc").
func (p *pdProxy) routeOf(host string) *route {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range strings.Split(host, ".") {
		if rt, ok := p.routes[l]; ok {
			return rt
		}
	}
	return nil
}

// record keeps the last successful answer of each GET and counts failures.
func (rt *route) record(resp *http.Response) error {
	if resp.StatusCode >= 500 {
		rt.failed.Add(1)
	}
	if resp.Request.Method != http.MethodGet || resp.StatusCode != http.StatusOK || rt.stale.Load() {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	rt.mu.Lock()
	rt.cache[resp.Request.URL.String()] = cached{header: resp.Header.Clone(), body: body}
	rt.mu.Unlock()
	return nil
}

// serveStale answers r from the cache; false when nothing was recorded for its URL.
func (rt *route) serveStale(w http.ResponseWriter, r *http.Request) bool {
	rt.mu.Lock()
	c, ok := rt.cache[r.URL.String()]
	rt.mu.Unlock()
	if !ok {
		return false
	}
	for k, v := range c.header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(c.body)
	return true
}

// Close stops the proxy.
func (p *pdProxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
