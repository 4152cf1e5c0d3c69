package discovery

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// dashboardPathPrefix starts the only paths the PD proxy forwards.
const dashboardPathPrefix = "/dashboard"

// PDProxyTarget is the URL the PD proxy forwards to:
// "<scheme>://<tc>-pd:2379", https when tc runs cluster TLS. The short
// Service name resolves because discovery runs in the cluster's namespace.
func PDProxyTarget(tc *v1alpha1.TidbCluster) *url.URL {
	return &url.URL{Scheme: scheme(tc), Host: tc.Name + "-pd:" + pdClientPort}
}

// NewPDProxy returns the handler of the proxy port (10262): a reverse proxy
// to target, normally PDProxyTarget, that exposes the PD dashboard. Only
// paths starting with /dashboard are forwarded, with the Host header set to
// the target; any other path answers 404, so the port does not expose the
// rest of PD's API. transport carries the TLS client configuration when PD
// requires it; nil means http.DefaultTransport. An unreachable PD answers 502.
func NewPDProxy(target *url.URL, transport http.RoundTripper) http.Handler {
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			klog.FromContext(r.Context()).Info("PD proxy failed", "target", target.String(), "path", r.URL.Path, "err", err.Error())
			http.Error(w, fmt.Sprintf("PD at %s is unreachable: %v", target, err), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, dashboardPathPrefix) {
			http.Error(w, fmt.Sprintf("not found: %s (only %s is proxied to PD)", r.URL.Path, dashboardPathPrefix),
				http.StatusNotFound)
			return
		}
		rp.ServeHTTP(w, r)
	})
}

// NewClusterPDProxy returns NewPDProxy for the TidbCluster namespace/tcName,
// whose target (and so its scheme, which follows spec.tlsCluster.enabled) is
// resolved by reading the TidbCluster on the first request and kept for the
// life of the process: enabling TLS changes the discovery Deployment, which
// restarts the process. Until the TidbCluster can be read, requests answer
// 503 with the error, and the next request tries again.
func NewClusterPDProxy(clusters ClusterGetter, namespace, tcName string, transport http.RoundTripper) http.Handler {
	return &clusterPDProxy{clusters: clusters, namespace: namespace, tcName: tcName, transport: transport}
}

// clusterPDProxy is the handler of NewClusterPDProxy.
type clusterPDProxy struct {
	clusters          ClusterGetter
	namespace, tcName string
	transport         http.RoundTripper

	mu    sync.Mutex
	proxy http.Handler
}

// ServeHTTP resolves the proxy once, then forwards.
func (p *clusterPDProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proxy, err := p.resolve(r)
	if err != nil {
		klog.FromContext(r.Context()).Info("PD proxy has no target yet", "err", err.Error())
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	proxy.ServeHTTP(w, r)
}

// resolve returns the cached proxy, building it from the TidbCluster first.
func (p *clusterPDProxy) resolve(r *http.Request) (http.Handler, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proxy != nil {
		return p.proxy, nil
	}
	tc, err := p.clusters.GetTidbCluster(r.Context(), p.namespace, p.tcName)
	if err != nil {
		return nil, fmt.Errorf("get TidbCluster %s/%s for the PD proxy: %w", p.namespace, p.tcName, err)
	}
	p.proxy = NewPDProxy(PDProxyTarget(tc), p.transport)
	return p.proxy, nil
}
