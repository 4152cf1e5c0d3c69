package simulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Per-cluster certificates. A TLS cluster of the TiDB Operator has its own CA: each component's pods
// mount a server certificate from the Secret `<tc>-<component>-cluster-secret` (tls.crt, tls.key and the
// CA as ca.crt), and the operator's client certificate in `<tc>-cluster-client-secret` is signed by the
// same CA. When such a Secret exists for the component an address names, the simulator terminates the
// tunnel with that Secret's certificate and requires a client certificate signed by its ca.crt; otherwise
// it falls back to a certificate the simulator's own TLSAuthority issues (tls.go).

// Keys of a kubernetes.io/tls Secret with its CA.
const (
	secretCertKey = "tls.crt"
	secretKeyKey  = "tls.key"
	secretCAKey   = "ca.crt"
)

// secretSyncTimeout bounds how long Start waits for the Secret cache; without read access to Secrets it
// never syncs and clusters are served with the TLSAuthority's certificates.
const secretSyncTimeout = 10 * time.Second

// clusterSecrets serves the TLS configs of the clusters' own server Secrets from an informer cache.
// Safe for concurrent use.
type clusterSecrets struct {
	factory informers.SharedInformerFactory
	lister  corelisters.SecretLister
	synced  cache.InformerSynced
	log     klog.Logger

	mu     sync.Mutex
	parsed map[string]parsedSecret
}

// parsedSecret is the TLS config of one Secret version.
type parsedSecret struct {
	version string
	cfg     *tls.Config
	err     error
}

// newClusterSecrets builds the Secret informer of namespace ("" for all); nothing runs until start.
func newClusterSecrets(kube kubernetes.Interface, namespace string, log klog.Logger) *clusterSecrets {
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Secrets()
	return &clusterSecrets{
		factory: factory, lister: inf.Lister(), synced: inf.Informer().HasSynced, log: log,
		parsed: map[string]parsedSecret{},
	}
}

// start runs the informer until ctx ends and waits (at most secretSyncTimeout) for its cache.
func (cs *clusterSecrets) start(ctx context.Context) {
	cs.factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, secretSyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), cs.synced) {
		cs.log.Info("Secrets not readable (yet): TLS clusters are served with the simulator's CA until they are")
	}
}

// serverConfig returns the TLS config of Secret namespace/name; nil without error when it does not
// exist, an error when it lacks a key or does not parse.
func (cs *clusterSecrets) serverConfig(namespace, name string) (*tls.Config, error) {
	sec, err := cs.lister.Secrets(namespace).Get(name)
	if err != nil {
		return nil, nil //nolint:nilerr // no such Secret: fall back to the TLSAuthority
	}
	key := namespace + "/" + name
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if p, ok := cs.parsed[key]; ok && p.version == sec.ResourceVersion {
		return p.cfg, p.err
	}
	cfg, err := secretTLSConfig(sec)
	cs.parsed[key] = parsedSecret{version: sec.ResourceVersion, cfg: cfg, err: err}
	return cfg, err
}

// exists reports whether Secret namespace/name is in the cache.
func (cs *clusterSecrets) exists(namespace, name string) bool {
	_, err := cs.lister.Secrets(namespace).Get(name)
	return err == nil
}

// secretTLSConfig is the server side of a tunnel with sec's certificate, requiring client certificates
// its ca.crt signed.
func secretTLSConfig(sec *corev1.Secret) (*tls.Config, error) {
	for _, k := range []string{secretCertKey, secretKeyKey, secretCAKey} {
		if len(sec.Data[k]) == 0 {
			return nil, fmt.Errorf("secret %s/%s has no %s", sec.Namespace, sec.Name, k)
		}
	}
	pair, err := tls.X509KeyPair(sec.Data[secretCertKey], sec.Data[secretKeyKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(sec.Data[secretCAKey]) {
		return nil, fmt.Errorf("secret %s/%s: %s holds no certificate", sec.Namespace, sec.Name, secretCAKey)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// clusterSecretName is the Secret holding the server certificate of comp's pods in cluster tc, named as
// the TiDB Operator names it.
func clusterSecretName(tc string, comp Component) string {
	return tc + "-" + string(comp) + "-cluster-secret"
}

// errTLSNotSimulated says a tunnel to an address has neither a cluster Secret nor the simulator's CA.
var errTLSNotSimulated = errors.New("TLS not simulated")

// tunnelConfig is the TLS config of a tunnel to hostport (host without the port): the certificate of the
// addressed cluster's own Secret for the component when it exists, else one the TLSAuthority issues;
// errTLSNotSimulated when there is neither.
func (s *Server) tunnelConfig(hostport, host string) (*tls.Config, error) {
	if s.secrets != nil && net.ParseIP(host) == nil {
		if t, ok := parseDMTarget(hostport, ""); ok {
			cfg, err := s.secrets.serverConfig(t.key.Namespace, dmServerSecret(t.key.Name))
			if cfg != nil || err != nil {
				return cfg, err
			}
		} else if t, err := parseTarget(hostport, ""); err == nil {
			cfg, err := s.secrets.serverConfig(t.key.Namespace, clusterSecretName(t.key.Name, t.component()))
			if cfg != nil || err != nil {
				return cfg, err
			}
		}
	}
	if s.tls == nil {
		return nil, errTLSNotSimulated
	}
	return s.tls.serverConfig(host)
}
