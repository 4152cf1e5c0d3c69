//go:build bench

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// CountingProxy is the HTTP proxy the operator is pointed at (HTTP_PROXY)
// during the bench. It counts every PD, TiKV, TiFlash and TiDB request by cluster
// namespace, component and path, and forwards it to the simulator, itself
// an HTTP proxy. The simulator is not changed and keeps no counters, so the
// counts are taken here, between the two processes.
type CountingProxy struct {
	// nsPrefix recognises the namespace label in a host name.
	nsPrefix string
	srv      *http.Server
	ln       net.Listener

	mu     sync.Mutex
	counts map[ProxyKey]int
}

// ProxyKey classifies one proxied request.
type ProxyKey struct {
	// Namespace of the TidbCluster, "" when the host names none we know.
	Namespace string
	// Component is pd, tikv, tiflash or tidb (by port), else "other".
	Component string
	// Path is the URL path without query.
	Path string
}

// StartCountingProxy listens on 127.0.0.1 (a free port) and forwards to the
// simulator at simURL. Hosts are attributed to the namespace label that
// starts with nsPrefix.
func StartCountingProxy(simURL, nsPrefix string) (*CountingProxy, error) {
	target, err := url.Parse(simURL)
	if err != nil {
		return nil, fmt.Errorf("simulator URL: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	p := &CountingProxy{nsPrefix: nsPrefix, ln: ln, counts: map[ProxyKey]int{}}
	transport := &http.Transport{
		Proxy:               http.ProxyURL(target),
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
	}
	rp := &httputil.ReverseProxy{
		// The inbound request is already in absolute form (it came through a
		// proxy), so the outbound URL is the same; the transport sends it to
		// the simulator as to a proxy.
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.Host },
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "bench proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Host == "" { // not a proxy request
				http.Error(w, "bench proxy: expected an absolute URL", http.StatusBadRequest)
				return
			}
			p.count(r.URL)
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's address for HTTP_PROXY.
func (p *CountingProxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy.
func (p *CountingProxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (p *CountingProxy) count(u *url.URL) {
	k := ProxyKey{Namespace: namespaceOf(u.Hostname(), p.nsPrefix), Component: componentOf(u.Port()), Path: u.Path}
	p.mu.Lock()
	p.counts[k]++
	p.mu.Unlock()
}

// Snapshot returns a copy of the counts so far.
func (p *CountingProxy) Snapshot() map[ProxyKey]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[ProxyKey]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// diffCounts returns after − before, per key (keys with 0 left out).
func diffCounts(before, after map[ProxyKey]int) map[ProxyKey]int {
	out := map[ProxyKey]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// namespaceOf returns the first dot-separated label of host that starts
// with prefix: "db-pd.bench-0007:2379" and
// "db-tidb-0.db-tidb-peer.bench-0007.svc" both give "bench-0007".
func namespaceOf(host, prefix string) string {
	for _, l := range strings.Split(host, ".") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// componentOf names the component a port belongs to.
func componentOf(port string) string {
	switch port {
	case "2379":
		return "pd"
	case "20180":
		return "tikv"
	case "20292":
		return "tiflash" // the TiFlash proxy's status port (/tiflash/store-status)
	case "10080":
		return "tidb"
	case "8301":
		return "ticdc"
	}
	return "other"
}

// byComponent sums counts per component.
func byComponent(c map[ProxyKey]int) map[string]int {
	out := map[string]int{}
	for k, v := range c {
		out[k.Component] += v
	}
	return out
}

// byPath sums counts per "<component> <path>".
func byPath(c map[ProxyKey]int) map[string]int {
	out := map[string]int{}
	for k, v := range c {
		out[k.Component+" "+k.Path] += v
	}
	return out
}

// total sums every count.
func total(c map[ProxyKey]int) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}
