package pdapi_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// asClientError wraps err as the PD client returns a failed request: the
// *url.Error of net/http under the method's name, traced.
func asClientError(err error) error {
	return pdapi.Trace(fmt.Errorf("pd GetHealth: %w",
		&url.Error{Op: "Get", URL: "https://basic-pd.ns:2379/pd/api/v1/health", Err: err}))
}

// TestUnreachableClassifiesRealErrors: the Go error values a PD request
// fails with, as net/http wraps them, are named by class and cause, never
// by the request's path.
func TestUnreachableClassifiesRealErrors(t *testing.T) {
	t.Parallel()
	dns := &net.DNSError{Err: "no such host", Name: "basic-pd.ns", Server: "10.96.0.10:53", IsNotFound: true}
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 96, 0, 20), Port: 2379},
		Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"DNS", asClientError(&net.OpError{Op: "dial", Net: "tcp", Err: dns}),
			"cannot be reached: DNS lookup failed (lookup basic-pd.ns on 10.96.0.10:53: no such host)"},
		{"refused", asClientError(refused),
			"cannot be reached: connection refused (dial tcp 10.96.0.20:2379: connect: connection refused)"},
		{"unknown authority", asClientError(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}),
			"cannot be reached: TLS handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"bare x509", asClientError(x509.UnknownAuthorityError{}),
			"cannot be reached: TLS handshake failed: x509: certificate signed by unknown authority"},
		{"alert", asClientError(&net.OpError{Op: "remote error", Err: tls.AlertError(42)}),
			"cannot be reached: TLS handshake failed: remote error: tls: bad certificate"},
		{"deadline", pdapi.Trace(fmt.Errorf("pd GetHealth: %w", context.DeadlineExceeded)), "timed out"},
		{"leader nil", pdapi.Trace(fmt.Errorf("pd GetHealth: %w", &pdapi.StatusError{Method: "GET",
			URL: "http://basic-pd.ns:2379/pd/api/v1/health", StatusCode: 503, Message: "[PD:server:ErrLeaderNil]leader is nil"})),
			"answers but has no leader (503 [PD:server:ErrLeaderNil]leader is nil)"},
		{"other status", &pdapi.StatusError{Method: "GET", URL: "http://x/pd/api/v1/health", StatusCode: 502, Message: "no route"},
			"answers 502 Bad Gateway: no route"},
		{"TLS config", &pdapi.TLSConfigError{Namespace: "ns", TCName: "basic", Err: errors.New("secret not found")},
			"cannot be reached: load client TLS config for ns/basic: secret not found"},
		{"other", asClientError(errors.New("EOF")), "cannot be reached: EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := pdapi.Unreachable(c.err); got != c.want {
				t.Errorf("Unreachable(%v)\n got %q\nwant %q", c.err, got, c.want)
			}
		})
	}
	if got := pdapi.Unreachable(nil); got != "" {
		t.Errorf("Unreachable(nil) = %q", got)
	}
}

// TestUnreachableOverTheWire classifies what the real client returns
// from a closed port, a TLS server it does not trust, a server that does
// not answer in time and a PD without a leader.
func TestUnreachableOverTheWire(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(untrusted.Close)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	noLeader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`"[PD:server:ErrLeaderNil]leader is nil"`))
	}))
	t.Cleanup(noLeader.Close)
	cases := []struct {
		name, url string
		tls       *tls.Config
		want      string
	}{
		{"closed port", closedURL, nil, "cannot be reached: connection refused ("},
		{"untrusted certificate", untrusted.URL, &tls.Config{MinVersion: tls.VersionTLS12},
			"cannot be reached: TLS handshake failed: tls: failed to verify certificate: x509: "},
		{"slow", slow.URL, nil, "timed out"},
		{"no leader", noLeader.URL, nil, "answers but has no leader (503 [PD:server:ErrLeaderNil]leader is nil)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := pdapi.NewClient(c.url, 300*time.Millisecond, c.tls).GetHealth(context.Background())
			if got := pdapi.Unreachable(err); !strings.HasPrefix(got, c.want) {
				t.Errorf("Unreachable(%v)\n got %q\nwant prefix %q", err, got, c.want)
			}
		})
	}
}

func TestIsLeaderNil(t *testing.T) {
	t.Parallel()
	nilLeader := &pdapi.StatusError{StatusCode: 503, Message: "[PD:server:ErrLeaderNil]leader is nil"}
	if !pdapi.IsLeaderNil(pdapi.Trace(fmt.Errorf("pd GetLeader: %w", nilLeader))) {
		t.Error("a traced 503 ErrLeaderNil is not leader-nil")
	}
	if pdapi.IsLeaderNil(&pdapi.StatusError{StatusCode: 503, Message: "overloaded"}) || pdapi.IsLeaderNil(context.DeadlineExceeded) {
		t.Error("another error counts as leader-nil")
	}
}
