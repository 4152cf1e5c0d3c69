package pdapi

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultTLSRefresh is how long an HTTPClientCache reuses a TLS client before it loads the client
// certificate again, so that a rotated Secret (e.g. renewed by cert-manager) is picked up without a
// restart.
const DefaultTLSRefresh = 10 * time.Minute

// TLSConfigFunc returns the client TLS config for TidbCluster namespace/tcName. The operator backs it
// with the Secret ClusterClientTLSSecretName(tcName) (see TLSConfigFromSecretData), read from an informer
// cache: it is called under a lock and must be cheap.
type TLSConfigFunc func(namespace, tcName string) (*tls.Config, error)

// NewTransport returns the transport for PD, TiDB and TiKV status clients: proxy from the environment
// (HTTP_PROXY/NO_PROXY; tests reach the PD simulator this way), bounded dial and TLS handshake, and, with
// tlsConfig, keep-alive disabled (spec §5).
func NewTransport(tlsConfig *tls.Config) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DefaultTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   DefaultTimeout,
		DisableKeepAlives:     tlsConfig != nil,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// clusterRef identifies a TidbCluster.
type clusterRef struct{ namespace, tcName string }

type tlsClient struct {
	client   *http.Client
	loadedAt time.Time
}

// HTTPClientCache hands out the *http.Client for the components of one TidbCluster: one shared plain
// client (connections pooled), and per cluster a TLS client with the cluster's client certificate,
// reloaded after DefaultTLSRefresh. PD, TiDB and TiKV status clients share it. Its clients bound dialing
// and the TLS handshake but set no overall Timeout, so that each API client chooses its own per request
// (through a context deadline): 5s for PD, 3s for TiDB health, longer for slow TiDB calls. Safe for
// concurrent use.
type HTTPClientCache struct {
	tlsConfig TLSConfigFunc
	refresh   time.Duration
	now       func() time.Time
	plain     *http.Client

	mu  sync.Mutex
	tls map[clusterRef]tlsClient
}

// NewHTTPClientCache returns a cache that loads TLS material through tlsConfig (nil when no cluster uses
// TLS).
func NewHTTPClientCache(tlsConfig TLSConfigFunc) *HTTPClientCache {
	return &HTTPClientCache{
		tlsConfig: tlsConfig,
		refresh:   DefaultTLSRefresh,
		now:       time.Now,
		plain:     &http.Client{Transport: NewTransport(nil)},
		tls:       map[clusterRef]tlsClient{},
	}
}

// Get returns the client for TidbCluster namespace/tcName. With tlsEnabled it loads the TLS config on
// first use and after DefaultTLSRefresh; when a reload fails the previous client is kept (its
// certificate may well still be valid) and the load is retried on the next call. It errors only when
// no TLS client can be had: no TLSConfigFunc, or the first load failed.
func (c *HTTPClientCache) Get(namespace, tcName string, tlsEnabled bool) (*http.Client, error) {
	if !tlsEnabled {
		return c.plain, nil
	}
	ref := clusterRef{namespace: namespace, tcName: tcName}
	c.mu.Lock()
	defer c.mu.Unlock()
	cached, ok := c.tls[ref]
	if ok && c.now().Sub(cached.loadedAt) < c.refresh {
		return cached.client, nil
	}
	cfg, err := c.loadTLS(ref)
	switch {
	case err != nil && ok:
		return cached.client, nil
	case err != nil:
		return nil, err
	}
	client := &http.Client{Transport: NewTransport(cfg)}
	c.tls[ref] = tlsClient{client: client, loadedAt: c.now()}
	return client, nil
}

// loadTLS calls the TLSConfigFunc and returns a private copy of its config.
func (c *HTTPClientCache) loadTLS(ref clusterRef) (*tls.Config, error) {
	if c.tlsConfig == nil {
		return nil, fmt.Errorf("TLS is enabled for %s/%s but no TLS config source is configured", ref.namespace, ref.tcName)
	}
	cfg, err := c.tlsConfig(ref.namespace, ref.tcName)
	if err == nil && cfg == nil {
		err = errors.New("no TLS config")
	}
	if err != nil {
		return nil, &TLSConfigError{Namespace: ref.namespace, TCName: ref.tcName, Err: err}
	}
	return cfg.Clone(), nil
}

// TLSConfigError is the error of a TLS client that cannot be had: the cluster's client certificate
// (its Secret, say) could not be loaded. Callers find it with errors.As to name the cause in a
// condition; it unwraps to the loader's error.
type TLSConfigError struct {
	Namespace, TCName string
	Err               error
}

// Error names the cluster and the loader's error (e.g. the missing Secret).
func (e *TLSConfigError) Error() string {
	return fmt.Sprintf("load client TLS config for %s/%s: %v", e.Namespace, e.TCName, e.Err)
}

// Unwrap returns the loader's error.
func (e *TLSConfigError) Unwrap() error { return e.Err }
