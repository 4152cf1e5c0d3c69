package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// maxBodyBytes bounds every request body the simulator reads.
const maxBodyBytes = 1 << 20

// bufferedResponse records an answer while the registry lock is held; it is flushed to the client after
// the lock is released, so that a slow client never stalls the simulator.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse { return &bufferedResponse{header: http.Header{}} }

// Header returns the recorded header map.
func (b *bufferedResponse) Header() http.Header { return b.header }

// WriteHeader records the status; later calls are ignored, as by net/http.
func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

// Write appends to the recorded body.
func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// flush sends the recorded answer to w.
func (b *bufferedResponse) flush(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}

// writeJSON renders v like PD's HTTP API (unrolled/render with IndentJSON): two-space indentation and a
// trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeText(w, http.StatusInternalServerError, fmt.Sprintf("simulator: encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// writePDError renders e as PD does: the message as a JSON string.
func writePDError(w http.ResponseWriter, e *pdError) { writeJSON(w, e.status, e.msg) }

// writeInvalidInput renders a 400 as PD's errcode.NewInvalidInputErr does.
func writeInvalidInput(w http.ResponseWriter, err error) {
	w.Header().Set("TiDB-Error-Code", "input")
	writeJSON(w, http.StatusBadRequest, pdapi.ErrorCodeJSON{Code: "input", Msg: err.Error(), Data: json.RawMessage(`{}`)})
}

// writeText writes a plain-text answer.
func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text) //nolint:gosec // G705: plain text by design; fault bodies are echoed on purpose

}

// readJSON decodes a bounded request body into v; it errors on malformed JSON, trailing data or an
// oversized body.
func readJSON(r *http.Request, v any) error {
	if r.Body == nil {
		return fmt.Errorf("empty request body")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBodyBytes))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode request body: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("decode request body: unexpected data after the JSON value")
	}
	return nil
}

// dropConnection hijacks the connection and closes it without an answer; when hijacking is impossible
// (a recorder in tests) it answers 502 instead.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	writeText(w, http.StatusBadGateway, "simulator: connection dropped\n")
}

// connectFailure answers as a client would experience a refused connection to hostport: through the
// proxy, a 502 like any HTTP proxy that cannot connect; on a direct listener, a closed connection.
func connectFailure(w http.ResponseWriter, viaProxy bool, hostport, reason string) {
	if viaProxy {
		writeText(w, http.StatusBadGateway, fmt.Sprintf("simulator: cannot connect to %s: %s\n", hostport, reason))
		return
	}
	dropConnection(w)
}
