package pdcontract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"sync"
)

// PD is a fake PD that answers exactly the fixture exchanges of its current phase (and of the phases it
// inherits from), and moves to an exchange's Next phase after answering it. A request no fixture
// answers gets 501 with a text naming it and is recorded in Unmatched, so that a test can fail on it
// instead of mistaking a made-up answer for PD's. It is safe for concurrent use.
type PD struct {
	mu        sync.Mutex
	phase     string
	served    []string
	unmatched []string
}

// NewPD returns a fake PD in phase.
func NewPD(phase string) *PD { return &PD{phase: phase} }

// Handler returns a fake PD in phase as an http.Handler.
func Handler(phase string) http.Handler { return NewPD(phase) }

// Phase returns the phase the fake PD is in now.
func (p *PD) Phase() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.phase
}

// SetPhase moves the fake PD to phase.
func (p *PD) SetPhase(phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = phase
}

// Served returns the names of the exchanges answered so far, in order.
func (p *PD) Served() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.served...)
}

// Unmatched returns "METHOD path body" of every request no fixture answered.
func (p *PD) Unmatched() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.unmatched...)
}

// ServeHTTP answers r from the fixtures.
func (p *PD) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	p.mu.Lock()
	e, ok := Find(p.phase, r.Method, r.URL.RequestURI(), body)
	if ok {
		p.served = append(p.served, e.Name)
		if e.Next != "" {
			p.phase = e.Next
		}
	} else {
		p.unmatched = append(p.unmatched, fmt.Sprintf("%s %s %s (phase %s)", r.Method, r.URL.RequestURI(), body, p.phase))
	}
	phase := p.phase
	p.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotImplemented)
		// The request is not echoed (a test reads Unmatched for it), only the phase.
		_, _ = io.WriteString(w, "pdcontract: no exchange for this request in phase "+strconv.Quote(phase)+"\n")
		return
	}
	Write(w, e)
}

// Write sends e's answer to w.
func Write(w http.ResponseWriter, e Exchange) {
	if e.ContentType != "" {
		w.Header().Set("Content-Type", e.ContentType)
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.Answer())
}

// Find returns the exchange that answers method and path (with query) with the request body in phase,
// looking in the phases it inherits from when phase has none. An exchange without a Request matches any
// body; one with a Request matches a body of the same JSON value.
func Find(phase, method, path string, body []byte) (Exchange, bool) {
	all := Exchanges()
	for ph := phase; ph != ""; ph = parents[ph] {
		for _, e := range all {
			if e.Phase == ph && e.Method == method && e.Path == path && sameRequest(e.Request, body) {
				return e, true
			}
		}
	}
	return Exchange{}, false
}

// sameRequest reports whether body is the JSON value want (any body when want is empty).
func sameRequest(want json.RawMessage, body []byte) bool {
	if len(bytes.TrimSpace(want)) == 0 {
		return true
	}
	var w, g any
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(body, &g) != nil {
		return false
	}
	return reflect.DeepEqual(w, g)
}
