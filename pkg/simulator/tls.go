package simulator

import (
	"bufio"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// TLSAuthority is the certificate authority the simulator terminates TLS with: it issues each simulated
// host a server certificate on first use and accepts only client certificates it signed. The tests (or
// the user) generate the CA and give the simulator its certificate and key; the cluster's cert Secrets
// are signed by the same CA, so the operator trusts the simulated servers and they trust its client
// certificate. Safe for concurrent use.
type TLSAuthority struct {
	cert *x509.Certificate
	key  crypto.Signer
	pool *x509.CertPool

	mu     sync.Mutex
	issued map[string]*tls.Certificate
}

// NewTLSAuthority reads a CA certificate and its private key (PEM: PKCS#8, PKCS#1 or EC). It errors when
// either holds no PEM block, the key does not parse or does not sign, or the certificate is not a CA.
func NewTLSAuthority(certPEM, keyPEM []byte) (*TLSAuthority, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("simulator TLS CA: %w", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("simulator TLS CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("simulator TLS CA: certificate %q is not a CA", cert.Subject.CommonName)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("simulator TLS CA: the private key cannot sign")
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &TLSAuthority{cert: cert, key: key, pool: pool, issued: map[string]*tls.Certificate{}}, nil
}

// LoadTLSAuthority is NewTLSAuthority over the files certFile and keyFile; it errors when a file cannot
// be read too.
func LoadTLSAuthority(certFile, keyFile string) (*TLSAuthority, error) {
	certPEM, err := os.ReadFile(certFile) //nolint:gosec // G304: a path the user passes on purpose
	if err != nil {
		return nil, fmt.Errorf("simulator TLS CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile) //nolint:gosec // G304: a path the user passes on purpose
	if err != nil {
		return nil, fmt.Errorf("simulator TLS CA: %w", err)
	}
	return NewTLSAuthority(certPEM, keyPEM)
}

// notSimulatedTLS answers a CONNECT that the simulator cannot terminate.
const notSimulatedTLS = "simulator: TLS not simulated (start it with a CA: --tls-ca-cert/--tls-ca-key, or create the cluster's <tc>-<component>-cluster-secret); use plain http:// addresses\n"

// SetTLSAuthority makes the server terminate TLS for CONNECT requests with certificates a issues and
// require client certificates a signed; nil turns TLS off (CONNECT is answered 501). Set it before
// serving.
func (s *Server) SetTLSAuthority(a *TLSAuthority) { s.tls = a }

// serverCert returns host's server certificate (a DNS name or IP address SAN), issued on first use.
func (a *TLSAuthority) serverCert(host string) (*tls.Certificate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.issued[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("server key for %s: %w", host, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("serial for %s: %w", host, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("server certificate for %s: %w", host, err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: key}
	a.issued[host] = c
	return c, nil
}

// serverConfig is the TLS config of one tunnel to host: its server certificate, and a client
// certificate signed by the CA required.
func (a *TLSAuthority) serverConfig(host string) (*tls.Config, error) {
	cert, err := a.serverCert(host)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{*cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    a.pool,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// CertPEM returns the CA certificate in PEM, e.g. for a client's trust store.
func (a *TLSAuthority) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.cert.Raw})
}

// serveConnect answers a CONNECT request (HTTPS through the proxy). Without a TLSAuthority or cluster
// Secrets it refuses with 501, as before TLS was simulated. Otherwise it checks that the authority names
// a simulated endpoint that accepts connections (else 502, as a proxy that cannot connect), then takes
// over the connection, terminates TLS with the cluster's own certificate (tls_secrets.go) or the host's
// certificate from the CA, requires a client certificate signed by that CA, and serves the requests
// inside with the same handlers as plain HTTP.
func (s *Server) serveConnect(w http.ResponseWriter, r *http.Request) {
	if s.tls == nil && s.secrets == nil {
		writeText(w, http.StatusNotImplemented, notSimulatedTLS)
		return
	}
	hostport := r.Host
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("simulator: CONNECT %q: %v\n", hostport, err))
		return
	}
	cfg, err := s.tunnelConfig(hostport, host)
	if errors.Is(err, errTLSNotSimulated) {
		writeText(w, http.StatusNotImplemented, notSimulatedTLS)
		return
	}
	if why := s.connectRefused(hostport); why != "" {
		writeText(w, http.StatusBadGateway, fmt.Sprintf("simulator: cannot connect to %s: %s\n", hostport, why))
		return
	}
	if err != nil {
		writeText(w, http.StatusInternalServerError, fmt.Sprintf("simulator: %v\n", err))
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		writeText(w, http.StatusInternalServerError, "simulator: connection cannot be taken over\n")
		return
	}
	conn, buffered, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = conn.Close()
		return
	}
	s.serveTunnel(&bufferedConn{Conn: conn, r: buffered.Reader}, cfg, hostport)
}

// connectRefused returns why a connection to hostport would fail: not a simulated address, no such
// cluster, or no endpoint that accepts it; "" when it would succeed. Pod IP addresses are accepted and
// answered by the metrics handler.
func (s *Server) connectRefused(hostport string) string {
	if ip, _, err := net.SplitHostPort(hostport); err == nil && net.ParseIP(ip) != nil {
		return ""
	}
	if t, ok := parseDMTarget(hostport, ""); ok {
		return s.reg.dmConnectRefused(t)
	}
	t, err := parseTarget(hostport, "")
	if err != nil {
		return err.Error()
	}
	t = s.reg.route(t)
	why := fmt.Sprintf("no simulated TiDB cluster %s", t.key)
	s.reg.withCluster(t.key, false, func(c *Cluster) { _, why = c.resolve(t) })
	return why
}

// serveTunnel serves the HTTP requests of one TLS connection to hostport over raw until the client
// closes it or it idles. The server runs the handshake (and the client certificate check) first; a
// refused handshake is logged at V(2).
func (s *Server) serveTunnel(raw net.Conn, cfg *tls.Config, hostport string) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.dispatch(w, r, hostport, true)
	})
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       30 * time.Second,
		ErrorLog:          log.New(tunnelLog{s: s, hostport: hostport}, "", 0),
	}
	_ = srv.Serve(newOneConnListener(raw, cfg))
}

// tunnelLog sends the tunnel server's own messages (refused handshakes) to the simulator's log.
type tunnelLog struct {
	s        *Server
	hostport string
}

func (l tunnelLog) Write(p []byte) (int, error) {
	l.s.log.V(2).Info("TLS tunnel", "host", l.hostport, "message", string(p))
	return len(p), nil
}

// bufferedConn reads what the proxy's reader already buffered before the connection itself.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// oneConnListener hands out one TLS server connection (a *tls.Conn, so that the server sets
// Request.TLS), then blocks Accept until that connection is closed, so that http.Server.Serve returns
// only when the tunnel is done.
type oneConnListener struct {
	conn   *tls.Conn
	once   sync.Once
	taken  bool
	closed chan struct{}
}

func newOneConnListener(raw net.Conn, cfg *tls.Config) *oneConnListener {
	l := &oneConnListener{closed: make(chan struct{})}
	l.conn = tls.Server(&notifyConn{Conn: raw, onClose: func() { l.once.Do(func() { close(l.closed) }) }}, cfg)
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if !l.taken {
		l.taken = true
		return l.conn, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// notifyConn calls onClose when the connection is closed.
type notifyConn struct {
	net.Conn
	onClose func()
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.onClose()
	return err
}

// clusterTLS is whether a cluster speaks TLS only, and the requests it was sent over TLS or refused.
type clusterTLS struct {
	enabled      bool
	requests     map[Component]uint64
	plainRefused uint64
}

// scheme is the scheme of the cluster's advertised URLs.
func (t *clusterTLS) scheme() string {
	if t.enabled {
		return "https"
	}
	return "http"
}

// admitScheme counts r and reports whether comp's endpoint accepts it: a cluster that speaks TLS only
// refuses plain HTTP; every cluster answers TLS requests (the tunnel checked the client certificate).
func (c *Cluster) admitScheme(comp Component, r *http.Request) bool {
	if r.TLS == nil {
		if c.tls.enabled {
			c.tls.plainRefused++
			return false
		}
		return true
	}
	if c.tls.requests == nil {
		c.tls.requests = map[Component]uint64{}
	}
	c.tls.requests[comp]++
	return true
}

// tlsSnapshot renders clusterTLS for the admin API.
func (c *Cluster) tlsSnapshot() api.TLSStats {
	st := api.TLSStats{Enabled: c.tls.enabled, Requests: map[string]uint64{}, PlainRefused: c.tls.plainRefused}
	for comp, n := range c.tls.requests {
		st.Requests[string(comp)] = n
	}
	return st
}
