package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadEnv(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		env     map[string]string
		wantErr string
		wantTLS bool
	}{
		{name: "complete", env: map[string]string{envTCName: "basic", envNamespace: "ns"}},
		{name: "TLS", env: map[string]string{envTCName: "basic", envNamespace: "ns", envTLSEnabled: "true"}, wantTLS: true},
		{name: "no TC_NAME", env: map[string]string{envNamespace: "ns"}, wantErr: "TC_NAME (the TidbCluster name) is required"},
		{name: "no namespace", env: map[string]string{envTCName: "basic"}, wantErr: "MY_POD_NAMESPACE (the discovery's namespace) is required"},
		{name: "bad boolean", env: map[string]string{envTCName: "basic", envNamespace: "ns", envDiscoveryMTLS: "yes please"},
			wantErr: `DISCOVERY_MTLS_ENABLED="yes please" is not a boolean`},
	}
	for _, c := range cases {
		o := newOptions()
		err := o.loadEnv(envOf(c.env))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		case c.wantErr == "" && (o.tcName != "basic" || o.namespace != "ns" || o.pdTLS != c.wantTLS):
			t.Errorf("%s: got %+v", c.name, o)
		}
	}
}

func TestRunMainWithoutEnvExits1(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if code := runMain(nil, envOf(nil), &stderr); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "TC_NAME") {
		t.Fatalf("stderr %q does not name TC_NAME", stderr.String())
	}
}

// TestRunServesAndShutsDown runs the process against a fake API server: a
// one-PD cluster bootstraps through /new, the proxy refuses non-dashboard
// paths, and cancelling the context (SIGTERM) stops run cleanly.
func TestRunServesAndShutsDown(t *testing.T) {
	t.Parallel()
	o := newOptions()
	o.tcName, o.namespace = "basic", "ns"
	o.kubeconfig = writeKubeconfig(t, fakeAPIServer(t))
	o.addr, o.proxyAddr = freeAddr(t), freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()

	base := "http://" + o.addr
	waitHealthy(t, base+"/healthz", done)
	peer := "basic-pd-0.basic-pd-peer.ns.svc:2380"
	status, body := get(t, base+"/new/"+base64.StdEncoding.EncodeToString([]byte(peer+"\n")))
	if want := "--initial-cluster=basic-pd-0=http://" + peer; status != 200 || body != want {
		t.Errorf("/new: %d %q, want 200 %q", status, body, want)
	}
	if status, _ := get(t, "http://"+o.proxyAddr+"/pd/api/v1/members"); status != http.StatusNotFound {
		t.Errorf("proxy outside /dashboard: %d, want 404", status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestRunFailsOnBusyAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	o := newOptions()
	o.tcName, o.namespace = "basic", "ns"
	o.kubeconfig = writeKubeconfig(t, fakeAPIServer(t))
	o.addr, o.proxyAddr = ln.Addr().String(), ""
	if err := run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "listen for discovery") {
		t.Fatalf("run on a busy address: %v, want a listen error", err)
	}
}

func TestTLSMaterial(t *testing.T) {
	t.Parallel()
	dir := writeTLSDir(t)
	o := newOptions()
	o.pdTLS, o.serverMTLS = true, true
	o.pdTLSDir, o.serverTLSDir = dir, dir
	if cfg, err := o.pdClientTLS(); err != nil || cfg == nil || len(cfg.Certificates) != 1 || cfg.RootCAs == nil {
		t.Errorf("PD client TLS: %v, %v", cfg, err)
	}
	cfg, err := o.serverTLS()
	if err != nil || cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.ClientCAs == nil {
		t.Errorf("server TLS: %+v, %v", cfg, err)
	}
	o.serverTLSDir = filepath.Join(dir, "missing")
	if _, err := o.serverTLS(); err == nil || !strings.Contains(err.Error(), "missing/ca.crt") {
		t.Errorf("missing material: %v, want an error naming the file", err)
	}
	o.pdTLS, o.serverMTLS = false, false
	if c, err := o.pdClientTLS(); c != nil || err != nil {
		t.Errorf("TLS off: %v, %v", c, err)
	}
}

// fakeAPIServer serves GET of TidbCluster ns/basic with one PD replica.
func fakeAPIServer(t *testing.T) string {
	t.Helper()
	tc := v1alpha1.TidbCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "pingcap.com/v1alpha1", Kind: "TidbCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", ResourceVersion: "7"},
		Spec:       v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: 1}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/pingcap.com/v1alpha1/namespaces/ns/tidbclusters/basic" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(tc)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q}}]
users: [{name: fake, user: {}}]
contexts: [{name: fake, context: {cluster: fake, user: fake}}]
current-context: fake
`, server)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// waitHealthy polls url until it answers 200, failing if run returns first.
func waitHealthy(t *testing.T, url string, done <-chan error) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) {
			select {
			case err := <-done:
				return false, fmt.Errorf("run returned early: %w", err)
			default:
			}
			resp, err := http.Get(url) //nolint:gosec // test URL
			if err != nil {
				return false, nil
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
	if err != nil {
		t.Fatalf("%s never became healthy: %v", url, err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec // test URL
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// writeTLSDir writes a self-signed CA that is also the serving and client
// certificate, as ca.crt, tls.crt and tls.key.
func writeTLSDir(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tidb-discovery-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	dir := t.TempDir()
	for name, data := range map[string][]byte{"ca.crt": certPEM, "tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestServeMutualTLS serves the discovery port with DISCOVERY_MTLS_ENABLED
// material: a client without a certificate is refused, one with it is served.
func TestServeMutualTLS(t *testing.T) {
	t.Parallel()
	dir := writeTLSDir(t)
	o := newOptions()
	o.serverMTLS, o.serverTLSDir = true, dir
	serverTLS, err := o.serverTLS()
	if err != nil {
		t.Fatal(err)
	}
	o.pdTLS, o.pdTLSDir = true, dir
	clientTLS, err := o.pdClientTLS() // same CA and certificate: good enough as a client
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []serverSpec{{name: "discovery", addr: addr, handler: ok, tls: serverTLS}}, time.Second)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	noCert := clientTLS.Clone()
	noCert.Certificates = nil
	url := "https://" + addr + "/healthz"
	waitUntil(t, func() bool { _, err := tlsGet(clientTLS, url); return err == nil })
	if _, err := tlsGet(noCert, url); err == nil {
		t.Errorf("a client without certificate was served")
	}
	if body, err := tlsGet(clientTLS, url); err != nil || body != "ok" {
		t.Errorf("client with certificate: %q, %v", body, err)
	}
}

func tlsGet(cfg *tls.Config, url string) (string, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// waitUntil polls cond until it holds, for up to ten seconds.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatal("condition never held")
	}
}
