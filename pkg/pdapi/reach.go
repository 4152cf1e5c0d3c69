package pdapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// leaderNilText is the part of PD's answer while it has no leader that every PD version shares:
// "[PD:server:ErrLeaderNil]leader is nil", with status 503 from PD's redirector.
const leaderNilText = "leader is nil"

// IsLeaderNil reports whether err is (or wraps) PD answering that it has no leader: its members cannot
// elect one (no quorum), so every API that needs the leader fails until they can.
func IsLeaderNil(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (strings.Contains(se.Message, leaderNilText) || strings.Contains(se.Message, "ErrLeaderNil"))
}

// Unreachable names why a request to PD failed, as a phrase to follow "PD at <url> ": the class of the
// failure and the text of its cause, without the request's path, so that the same failure of another
// endpoint reads the same. For example:
//
//	cannot be reached: DNS lookup failed (lookup basic-pd.ns on 10.96.0.10:53: no such host)
//	cannot be reached: connection refused (dial tcp 10.96.0.20:2379: connect: connection refused)
//	cannot be reached: TLS handshake failed: tls: failed to verify certificate: x509: …
//	answers but has no leader (503 [PD:server:ErrLeaderNil]leader is nil)
//	answers 500 Internal Server Error: <PD's text>
//	timed out
//
// It returns "" for a nil err.
func Unreachable(err error) string {
	var (
		se     *StatusError
		config *TLSConfigError
		dns    *net.DNSError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return answered(se)
	case errors.As(err, &config):
		return "cannot be reached: " + config.Error()
	case errors.As(err, &dns):
		return "cannot be reached: DNS lookup failed (" + dns.Error() + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "cannot be reached: connection refused (" + cause(err) + ")"
	case isTimeout(err):
		return "timed out"
	case isTLS(err):
		return "cannot be reached: TLS handshake failed: " + cause(err)
	}
	return "cannot be reached: " + cause(err)
}

// answered names an unexpected answer of PD (or of a proxy in front of it).
func answered(se *StatusError) string {
	text := fmt.Sprintf("%d %s", se.StatusCode, http.StatusText(se.StatusCode))
	if se.Message != "" {
		text = fmt.Sprintf("%d %s", se.StatusCode, se.Message)
	}
	if IsLeaderNil(se) {
		return "answers but has no leader (" + text + ")"
	}
	if se.Message != "" {
		text = fmt.Sprintf("%d %s: %s", se.StatusCode, http.StatusText(se.StatusCode), se.Message)
	}
	return "answers " + text
}

// isTimeout reports whether err is a deadline: the request's context, the client's timeout or a
// dial or read that timed out.
func isTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
}

// isTLS reports whether err comes from the TLS handshake: a server certificate that does not verify,
// an alert from the server (a client certificate it refused), or a peer that does not speak TLS.
func isTLS(err error) bool {
	var (
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		record    tls.RecordHeaderError
		alert     tls.AlertError
		op        *net.OpError
	)
	switch {
	case errors.As(err, &authority), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &verify), errors.As(err, &record), errors.As(err, &alert):
		return true
	case errors.As(err, &op) && op.Op == "remote error": // crypto/tls wraps a received alert so
		return true
	}
	return strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

// cause is the text of err below the *url.Error that names the request's method and URL, or err's
// own text when there is none.
func cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}
