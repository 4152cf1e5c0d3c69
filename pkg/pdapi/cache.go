package pdapi

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// PDClientPort is PD's client port, the one that serves the HTTP API.
const PDClientPort = 2379

// ClusterOptions says how to reach the PD of one TidbCluster.
type ClusterOptions struct {
	// TLSEnabled selects https and a client certificate (spec.tlsCluster.enabled).
	TLSEnabled bool
	// ClusterDomain, when set, makes host names fully qualified: "<svc>.<ns>.svc.<ClusterDomain>".
	ClusterDomain string
	// Member, when set, addresses that one PD member through the headless peer Service
	// ("<member>.<tc>-pd-peer.<ns>…"), as `GET /pd/api/v2/ready` needs.
	Member string
	// PeerService addresses the cluster through the headless "<tc>-pd-peer" Service (clusters that span
	// Kubernetes clusters) instead of "<tc>-pd". Ignored when Member is set.
	PeerService bool
	// ClientURL, when set, is used verbatim as the base URL, e.g. a peer member's client URL from
	// status.pd.peerMembers (the fallback of spec §5 when /health fails).
	ClientURL string
}

// ClientURL returns the base URL of the PD API for TidbCluster namespace/tcName:
// "<scheme>://<tc>-pd.<ns>[.svc.<domain>]:2379", or the peer-Service, member or verbatim variant that
// opts selects.
func ClientURL(namespace, tcName string, opts ClusterOptions) string {
	if opts.ClientURL != "" {
		return strings.TrimSuffix(opts.ClientURL, "/")
	}
	scheme := "http"
	if opts.TLSEnabled {
		scheme = "https"
	}
	host := tcName + "-pd"
	switch {
	case opts.Member != "":
		host = opts.Member + "." + tcName + "-pd-peer"
	case opts.PeerService:
		host += "-peer"
	}
	host += "." + namespace
	if opts.ClusterDomain != "" {
		host += ".svc." + opts.ClusterDomain
	}
	return fmt.Sprintf("%s://%s:%d", scheme, host, PDClientPort)
}

// Control hands out PD clients per TidbCluster, cached.
type Control interface {
	// GetPDClient returns the (cached) client for the PD of TidbCluster namespace/tcName as opts
	// addresses it. It never fails and does no I/O: the TLS config is loaded on the client's first
	// request, and when it cannot be loaded every request returns that error until it can.
	GetPDClient(namespace, tcName string, opts ClusterOptions) Client
}

// cacheKey identifies one cached client; the scheme makes a TLS flip a different key.
type cacheKey struct {
	scheme, namespace, tcName, domain, member, clientURL string
	peer                                                 bool
}

func newCacheKey(namespace, tcName string, opts ClusterOptions) cacheKey {
	scheme := "http"
	if opts.TLSEnabled {
		scheme = "https"
	}
	return cacheKey{
		scheme: scheme, namespace: namespace, tcName: tcName, domain: opts.ClusterDomain,
		member: opts.Member, clientURL: opts.ClientURL, peer: opts.PeerService,
	}
}

// flipped is the same key with the other TLS setting.
func (k cacheKey) flipped() cacheKey {
	if k.scheme == "http" {
		k.scheme = "https"
	} else {
		k.scheme = "http"
	}
	return k
}

// defaultControl is the Control over HTTP.
type defaultControl struct {
	httpClients *HTTPClientCache
	timeout     time.Duration

	mu      sync.Mutex
	clients map[cacheKey]Client
}

// NewControl returns a Control whose clients time out after timeout (DefaultTimeout when ≤ 0) and load
// TLS material through tlsConfig (nil when no cluster uses TLS). Clients are cached per (scheme,
// namespace, TidbCluster, cluster domain, member, peer Service, client URL); flipping TLS replaces the
// cluster's client; TLS material is reloaded after DefaultTLSRefresh. Safe for concurrent use.
func NewControl(tlsConfig TLSConfigFunc, timeout time.Duration) Control {
	return NewControlWithHTTPClients(NewHTTPClientCache(tlsConfig), timeout)
}

// NewControlWithHTTPClients is NewControl sending through httpClients, so that the PD, TiDB and TiKV
// clients of the operator share one TLS cache.
func NewControlWithHTTPClients(httpClients *HTTPClientCache, timeout time.Duration) Control {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &defaultControl{httpClients: httpClients, timeout: timeout, clients: map[cacheKey]Client{}}
}

// GetPDClient implements Control.
func (c *defaultControl) GetPDClient(namespace, tcName string, opts ClusterOptions) Client {
	key := newCacheKey(namespace, tcName, opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.clients[key]; ok {
		return client
	}
	tlsEnabled := opts.TLSEnabled
	client := &pdClient{
		baseURL: ClientURL(namespace, tcName, opts),
		timeout: c.timeout,
		httpClient: func() (*http.Client, error) {
			return c.httpClients.Get(namespace, tcName, tlsEnabled)
		},
	}
	c.clients[key] = client
	delete(c.clients, key.flipped())
	return client
}
