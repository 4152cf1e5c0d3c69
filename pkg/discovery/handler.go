package discovery

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"k8s.io/klog/v2"
)

// Register types of GET /new/{b64}/{registerType}.
const (
	// RegisterTypePD asks for pd-server arguments; the default.
	RegisterTypePD = "pd"
	// RegisterTypeDM asks for dm-master arguments (Discovery.DiscoverDM).
	RegisterTypeDM = "dm"
)

// Handler serves the discovery API (port 10261). Every answer is plain text:
//
//	GET /new/{base64(advertisePeerURL)}                  pd-server arguments (Discovery.Discover)
//	GET /new/{base64(advertisePeerURL)}/pd               the same
//	GET /new/{base64(advertisePeerURL)}/dm               dm-master arguments (Discovery.DiscoverDM)
//	GET /verify/{base64(pdURL)}                          PD addresses for TiKV (Discovery.Verify)
//	GET /healthz                                         "ok"
//
// Malformed requests answer 400 with the reason; every other failure (an
// unknown register type and every DM error included, as the TiDB Operator
// answers them) answers 500 with the error text, which the start scripts log
// before retrying.
type Handler struct {
	d *Discovery
}

// NewHandler returns the HTTP handler of d.
func NewHandler(d *Discovery) *Handler {
	return &Handler{d: d}
}

// ServeHTTP routes by path prefix rather than with http.ServeMux, because a
// base64 segment may contain "/" and even "//", which ServeMux would split
// or redirect.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: only GET is served", http.StatusMethodNotAllowed)
		return
	}
	path := r.URL.Path
	switch {
	case path == "/healthz":
		writeText(w, "ok")
	case strings.HasPrefix(path, "/new/"):
		h.serveNew(w, r, strings.TrimPrefix(path, "/new/"))
	case strings.HasPrefix(path, "/verify/"):
		h.serveVerify(w, r, strings.TrimPrefix(path, "/verify/"))
	default:
		http.Error(w, fmt.Sprintf("not found: %s (served: /new/{base64}, /verify/{base64}, /healthz)", path),
			http.StatusNotFound)
	}
}

// serveNew answers GET /new/{b64}[/{registerType}] with pd-server or
// dm-master arguments.
func (h *Handler) serveNew(w http.ResponseWriter, r *http.Request, rest string) {
	peerURL, registerType, err := splitNewPath(rest)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var args string
	switch registerType {
	case RegisterTypePD, "":
		args, err = h.d.Discover(r.Context(), peerURL)
	case RegisterTypeDM:
		args, err = h.d.DiscoverDM(r.Context(), peerURL)
	default:
		err = fmt.Errorf("invalid register-type %q (want %q or %q)", registerType, RegisterTypePD, RegisterTypeDM)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeText(w, args)
}

// serveVerify answers GET /verify/{b64} with the PD addresses to use. When
// the TidbCluster cannot be read it still answers 200 with the given URL,
// because that is the address the caller would use anyway.
func (h *Handler) serveVerify(w http.ResponseWriter, r *http.Request, rest string) {
	pdURL, err := decodeSegment(rest)
	if err != nil {
		h.fail(w, r, fmt.Errorf("%w: PD URL: %w", ErrInvalidRequest, err))
		return
	}
	answer, err := h.d.Verify(r.Context(), pdURL)
	if err != nil {
		klog.FromContext(r.Context()).Info("verify fell back to the given PD URL", "pdURL", pdURL, "err", err.Error())
	}
	writeText(w, answer)
}

// fail answers err as plain text: 400 for an ErrInvalidRequest, else 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	if errors.Is(err, ErrInvalidRequest) {
		status = http.StatusBadRequest
	}
	klog.FromContext(r.Context()).V(1).Info("discovery request failed", "path", r.URL.Path, "status", status, "err", err.Error())
	http.Error(w, err.Error(), status)
}

// splitNewPath splits "{b64}" or "{b64}/{registerType}" and decodes the
// advertise peer URL. The whole rest is tried first, because the standard
// base64 alphabet contains "/"; a register type ("pd", "dm") can never make
// the whole rest valid base64, as its length would not be a multiple of 4.
func splitNewPath(rest string) (peerURL, registerType string, err error) {
	if s, err := decodeSegment(rest); err == nil {
		return s, RegisterTypePD, nil
	}
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		if s, err := decodeSegment(rest[:i]); err == nil {
			return s, rest[i+1:], nil
		}
	}
	_, err = decodeSegment(rest)
	return "", "", fmt.Errorf("%w: advertise peer URL: %w", ErrInvalidRequest, err)
}

// decodeSegment decodes standard base64 and trims surrounding white space:
// the start scripts encode `echo <url>`, whose trailing newline is part of
// the encoded value.
func decodeSegment(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty base64 segment")
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("%q is not standard base64: %w", s, err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%q decodes to an empty value", s)
	}
	return v, nil
}

// writeText writes a 200 plain-text answer without a trailing newline, so
// scripts can use it verbatim as arguments.
func writeText(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.WriteString(w, s) //nolint:gosec // G705: text/plain with nosniff is never rendered as HTML
}
