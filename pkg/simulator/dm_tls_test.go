package simulator

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// proxiedClients hands out one client through a proxy, TLS or not.
type proxiedClients struct{ plain, tls *http.Client }

func (p proxiedClients) Get(_, _ string, tlsEnabled bool) (*http.Client, error) {
	if tlsEnabled {
		return p.tls, nil
	}
	return p.plain, nil
}

// TestDMOverTLS: with the dm-master server Secret, the DMCluster speaks TLS only, with that Secret's
// certificate, and advertises https URLs; the operator's client reaches it with its client certificate.
func TestDMOverTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "basic's DM CA")
	d := threeMasters(t)
	withSecrets(t, d.harness, ca.serverSecret(t, "basic-dm-master-cluster-secret",
		"basic-dm-master.default", "*.basic-dm-master-peer.default"))
	srv := httptest.NewServer(d.srv)
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	newClient := func(cfg *tls.Config) *http.Client {
		tr := pdapi.NewTransport(cfg)
		tr.Proxy = http.ProxyURL(proxyURL)
		return &http.Client{Transport: tr}
	}
	clients := proxiedClients{
		plain: newClient(nil),
		tls:   newClient(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{ca.client(t)}, MinVersion: tls.VersionTLS12}),
	}
	ctl := dmapi.NewControlWithHTTPClients(clients, 0)
	ctx := context.Background()

	masters, err := ctl.GetClient("default", "basic", dmapi.Options{TLSEnabled: true}).GetMasters(ctx)
	if err != nil || len(masters) != 3 || !strings.HasPrefix(masters[0].PeerURLs[0], "https://") {
		t.Fatalf("GetMasters over TLS = %+v, %v", masters, err)
	}
	if err := ctl.GetClient("default", "basic", dmapi.Options{TLSEnabled: true}).EvictLeader(ctx, "basic-dm-master-0"); err != nil {
		t.Fatalf("EvictLeader over TLS: %v", err)
	}
	if _, err := ctl.GetClient("default", "basic", dmapi.Options{}).GetMasters(ctx); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("plain HTTP to a TLS-only dm-master: %v", err)
	}
	st := d.state()
	if !st.TLSOnly || st.TLSRequests != 2 || st.PlainRefused != 1 || st.Leader != "basic-dm-master-1" {
		t.Errorf("TLS state: only %v, %d TLS, %d refused, leader %q", st.TLSOnly, st.TLSRequests, st.PlainRefused, st.Leader)
	}
}
