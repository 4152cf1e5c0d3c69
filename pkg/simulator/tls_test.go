package simulator

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// testCA is a throwaway certificate authority for the TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pem(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	keyDER, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// client issues a client certificate.
func (ca *testCA) client(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "operator"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsHarness is a harness whose cluster's TidbCluster has tlsCluster.enabled, served on a real listener
// with the simulator's CA.
func tlsHarness(t *testing.T, ca *testCA) (*harness, *httptest.Server) {
	t.Helper()
	h := newHarness(t)
	if ca != nil {
		certPEM, keyPEM := ca.pem(t)
		a, err := NewTLSAuthority(certPEM, keyPEM)
		if err != nil {
			t.Fatalf("NewTLSAuthority: %v", err)
		}
		h.srv.SetTLSAuthority(a)
	}
	h.reg.Observe(h.key, ClusterObservation{HasPVCs: true, TidbCluster: &TidbClusterInfo{TLSCluster: true}})
	h.bootstrap(1, 1, 1)
	obs := ClusterObservation{HasPVCs: true, TidbCluster: &TidbClusterInfo{TLSCluster: true}}
	for _, p := range h.pods {
		obs.Pods = append(obs.Pods, p)
	}
	h.reg.Observe(h.key, obs)
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	return h, srv
}

// httpsClient sends through the proxy srv, trusts roots and presents certs.
func httpsClient(t *testing.T, srv *httptest.Server, roots *x509.Certificate, certs ...tls.Certificate) *http.Client {
	t.Helper()
	proxy, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(roots)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxy),
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs, MinVersion: tls.VersionTLS12},
	}}
}

func tlsState(t *testing.T, h *harness) api.TLSStats {
	t.Helper()
	var st api.TLSStats
	h.with(func(c *Cluster) { st = c.tlsSnapshot() })
	return st
}

func TestTLSClientCertificateAccepted(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "cluster CA")
	h, srv := tlsHarness(t, ca)
	client := httpsClient(t, srv, ca.cert, ca.client(t))
	for _, u := range []string{
		"https://basic-pd.default:2379/pd/api/v1/members",
		"https://basic-tikv-0.basic-tikv-peer.default.svc:20180/status",
		"https://basic-tidb-0.basic-tidb-peer.default:10080/status",
	} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", u, resp.StatusCode, body)
		}
		if strings.Contains(u, "/members") {
			var members pdapi.MembersInfo
			if err := json.Unmarshal(body, &members); err != nil || len(members.Members) != 1 ||
				!strings.HasPrefix(members.Members[0].ClientUrls[0], "https://") {
				t.Errorf("members over TLS = %s (%v), want one member advertising an https client URL", body, err)
			}
		}
	}
	st := tlsState(t, h)
	if !st.Enabled || st.Requests["pd"] != 1 || st.Requests["tikv"] != 1 || st.Requests["tidb"] != 1 || st.PlainRefused != 0 {
		t.Errorf("TLS stats = %+v, want one TLS request each to pd, tikv, tidb and none refused", st)
	}
}

func TestTLSRefusesClientsWithoutTheCAsCertificate(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "cluster CA")
	h, srv := tlsHarness(t, ca)
	foreign := newTestCA(t, "foreign CA")
	for name, client := range map[string]*http.Client{
		"no client certificate":        httpsClient(t, srv, ca.cert),
		"certificate of a foreign CA":  httpsClient(t, srv, ca.cert, foreign.client(t)),
		"server not trusted by client": httpsClient(t, srv, foreign.cert, ca.client(t)),
	} {
		resp, err := client.Get("https://basic-pd.default:2379/pd/api/v1/members")
		if err == nil {
			_ = resp.Body.Close()
			t.Errorf("%s: GET answered %d, want a TLS error", name, resp.StatusCode)
		}
	}
	if st := tlsState(t, h); len(st.Requests) != 0 {
		t.Errorf("TLS stats = %+v, want no request served", st)
	}
}

func TestTLSClusterRefusesPlainHTTP(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "cluster CA")
	h, _ := tlsHarness(t, ca)
	r := h.pd(http.MethodGet, "/pd/api/v1/members", "")
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "HTTPS server") {
		t.Errorf("plain GET to a TLS cluster = %d %q, want 400 naming HTTPS", r.status, r.body)
	}
	if st := tlsState(t, h); st.PlainRefused != 1 {
		t.Errorf("TLS stats = %+v, want one plain request refused", st)
	}
}

func TestTLSConnectRefusals(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "cluster CA")
	_, srv := tlsHarness(t, ca)
	client := httpsClient(t, srv, ca.cert, ca.client(t))
	for _, u := range []string{
		"https://other-pd.default:2379/pd/api/v1/members",           // no such cluster
		"https://basic-tikv-7.basic-tikv-peer.default:20180/status", // no such pod
		"https://example.com:443/",                                  // not simulated
	} {
		resp, err := client.Get(u)
		if err == nil {
			_ = resp.Body.Close()
			t.Errorf("GET %s answered %d, want the proxy to refuse the CONNECT", u, resp.StatusCode)
		} else if !strings.Contains(err.Error(), "Bad Gateway") {
			t.Errorf("GET %s: %v, want 502 Bad Gateway from the proxy", u, err)
		}
	}

	// Without a CA the simulator does not speak TLS.
	_, plain := tlsHarness(t, nil)
	resp, err := httpsClient(t, plain, ca.cert, ca.client(t)).Get("https://basic-pd.default:2379/pd/api/v1/members")
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("GET without a CA answered %d, want CONNECT refused", resp.StatusCode)
	}
	if !strings.Contains(err.Error(), "Not Implemented") {
		t.Errorf("GET without a CA: %v, want 501 Not Implemented", err)
	}
}

func TestNewTLSAuthorityRejectsNonCA(t *testing.T) {
	t.Parallel()
	if _, err := NewTLSAuthority([]byte("junk"), []byte("junk")); err == nil {
		t.Error("NewTLSAuthority(junk) succeeded")
	}
	ca := newTestCA(t, "cluster CA")
	leaf := ca.client(t)
	keyDER, err := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewTLSAuthority(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Certificate[0]}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	if err == nil || !strings.Contains(err.Error(), "not a CA") {
		t.Errorf("NewTLSAuthority(leaf) = %v, want 'not a CA'", err)
	}
}
