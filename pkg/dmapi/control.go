package dmapi

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Control hands out the Client of each DMCluster.
type Control interface {
	// GetClient returns the (cached) Client of DMCluster namespace/dcName. It does no I/O and never
	// fails: with opts.TLSEnabled the client certificate is loaded on the first request, and every
	// request errors while it cannot be.
	GetClient(namespace, dcName string, opts Options) Client
}

// controlKey identifies one cached client.
type controlKey struct {
	namespace, dcName string
	tls               bool
}

// defaultControl is the Control over HTTP.
type defaultControl struct {
	httpClients HTTPClients
	timeout     time.Duration

	mu      sync.Mutex
	clients map[controlKey]Client
}

// NewControl returns a Control whose clients load the client certificate of a TLS DMCluster through
// tlsConfig (called with the namespace and DMCluster name; see SecretTLS), reloaded after
// pdapi.DefaultTLSRefresh, and bound each request by timeout (DefaultTimeout when ≤ 0). It has its own
// pdapi.HTTPClientCache because a DMCluster's certificate is not its TidbCluster namesake's. Safe for
// concurrent use.
func NewControl(tlsConfig pdapi.TLSConfigFunc, timeout time.Duration) Control {
	return NewControlWithHTTPClients(pdapi.NewHTTPClientCache(tlsConfig), timeout)
}

// NewControlWithHTTPClients is NewControl sending through httpClients, which are asked for a client by
// namespace and DMCluster name.
func NewControlWithHTTPClients(httpClients HTTPClients, timeout time.Duration) Control {
	return &defaultControl{httpClients: httpClients, timeout: timeout, clients: map[controlKey]Client{}}
}

// GetClient implements Control.
func (c *defaultControl) GetClient(namespace, dcName string, opts Options) Client {
	key := controlKey{namespace: namespace, dcName: dcName, tls: opts.TLSEnabled}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[key]; ok {
		return cl
	}
	cl := NewClient(c.httpClients, namespace, dcName, opts, c.timeout)
	c.clients[key] = cl
	delete(c.clients, controlKey{namespace: namespace, dcName: dcName, tls: !opts.TLSEnabled})
	return cl
}

// SecretData reads the data of Secret namespace/name, e.g. from the API server.
type SecretData func(ctx context.Context, namespace, name string) (map[string][]byte, error)

// SecretTLS returns the TLSConfigFunc of NewControl: it reads Secret `<dc>-dm-client-secret` (ca.crt,
// tls.crt, tls.key) through get, bounded by 5s, and errors when the Secret cannot be read or holds no
// valid certificate (pdapi.TLSConfigFromSecretData).
func SecretTLS(get SecretData) pdapi.TLSConfigFunc {
	return func(namespace, dcName string) (*tls.Config, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		data, err := get(ctx, namespace, names.DMClientSecret(dcName))
		if err != nil {
			return nil, err
		}
		return pdapi.TLSConfigFromSecretData(data)
	}
}
