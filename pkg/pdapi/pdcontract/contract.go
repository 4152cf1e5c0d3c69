// Package pdcontract is the contract of a real PD v8.5 that the operator depends on, written from
// recorded facts of an unmodified PD v8.5.7: for each endpoint the operator calls, what PD answers in a
// given cluster state (status code, content type, body) and what the operator's decision depends on in
// that answer. The values (IDs, names, addresses) are our own; the shapes, codes, content types and
// fixed texts are PD's.
//
// The package is test support only: the PD client's contract tests serve the exchanges through PD (a
// fake PD answering exactly the fixtures), and the simulator's contract tests check that the simulator
// answers the same way.
package pdcontract

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"sync"
)

// Phases of a PD cluster the fixtures are recorded in. Every phase but Fresh and NoLeader has the same
// three PD members and four TiKV stores (IDs 101..104, pods basic-tikv-0..3); they differ as named.
const (
	// PhaseFresh is a single PD (basic-pd-0) that is not bootstrapped: no TiKV store has registered.
	PhaseFresh = "fresh"
	// PhaseBootstrapped is three PD members and four Up TiKV stores, placement rules enabled, no
	// evict-leader scheduler.
	PhaseBootstrapped = "bootstrapped"
	// PhaseEvictingOne is PhaseBootstrapped with store 103 in the combined evict-leader scheduler.
	PhaseEvictingOne = "evicting-one"
	// PhaseEvictingTwo is PhaseBootstrapped with stores 103 and 104 in the combined evict-leader scheduler.
	PhaseEvictingTwo = "evicting-two"
	// PhaseStoreOffline is PhaseBootstrapped after store 104 was deleted, while it still holds regions.
	PhaseStoreOffline = "store-offline"
	// PhaseStoreTombstone is PhaseStoreOffline once store 104 holds no region and became Tombstone.
	PhaseStoreTombstone = "store-tombstone"
	// PhaseStoreDisconnected is PhaseBootstrapped after store 101 stopped sending heartbeats.
	PhaseStoreDisconnected = "store-disconnected"
	// PhaseStoreDown is PhaseStoreDisconnected once max-store-down-time has passed.
	PhaseStoreDown = "store-down"
	// PhasePlacementDisabled is PhaseBootstrapped with replication.enable-placement-rules turned off.
	PhasePlacementDisabled = "placement-disabled"
	// PhaseNoLeader is three PD members of which too few are healthy to elect a leader.
	PhaseNoLeader = "no-leader"
)

// parents maps a phase to the phase whose exchanges it inherits when it has none of its own for a
// request: the derived phases differ from PhaseBootstrapped only in what they name.
var parents = map[string]string{
	PhaseEvictingOne:       PhaseBootstrapped,
	PhaseEvictingTwo:       PhaseBootstrapped,
	PhaseStoreOffline:      PhaseBootstrapped,
	PhaseStoreTombstone:    PhaseBootstrapped,
	PhaseStoreDisconnected: PhaseBootstrapped,
	PhaseStoreDown:         PhaseBootstrapped,
	PhasePlacementDisabled: PhaseBootstrapped,
}

// Parent returns the phase that phase inherits exchanges from, or "" when none.
func Parent(phase string) string { return parents[phase] }

// Comparison modes of an exchange (Exchange.Mode).
const (
	// CompareExact: the body must be the same JSON value (fixed texts such as error strings).
	CompareExact = "exact"
	// CompareShape: the body must have the same JSON structure: the same object keys with the same
	// kinds at every level, each array element shaped like one of the fixture's elements.
	CompareShape = "shape"
	// CompareStatus: only the status code and content type are fixed (e.g. an empty body).
	CompareStatus = "status"
)

// Exchange is one request to PD and PD's answer in a phase.
type Exchange struct {
	// Name identifies the exchange, e.g. "fresh/GET stores"; unique over all fixtures.
	Name string `json:"name"`
	// Phase is the cluster state PD answers in (PhaseFresh, …).
	Phase string `json:"phase"`
	// Method and Path (with its query, e.g. "/pd/api/v1/stores?state=2") are the request's.
	Method string `json:"method"`
	Path   string `json:"path"`
	// Request is the JSON request body; empty when the request has none.
	Request json.RawMessage `json:"request,omitempty"`
	// Status and ContentType are PD's answer's; ContentType is "" when PD sends none (an empty body).
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	// Body is PD's answer when it is JSON (a double-encoded error is a JSON string holding JSON text).
	Body json.RawMessage `json:"body,omitempty"`
	// Text is PD's answer when it is not JSON (e.g. "404 page not found\n"); empty otherwise.
	Text string `json:"text,omitempty"`
	// Compare is how an answer is held to the fixture (CompareExact, …); see Mode for the default.
	Compare string `json:"compare,omitempty"`
	// Fields, when set, limits a shape comparison to these dotted paths (e.g. "replication.max-replicas"):
	// for answers much larger than what the operator reads.
	Fields []string `json:"fields,omitempty"`
	// Optional names object keys PD renders only sometimes and the recordings do not pin (e.g. a
	// store's slow_score, which depends on what the TiKV reported): a comparison ignores them.
	Optional []string `json:"optional,omitempty"`
	// Next is the phase PD is in after answering, when the request changes it ("" for none).
	Next string `json:"next,omitempty"`
	// Decision says what the operator's decision depends on in this answer, e.g.
	// "must decode: member IDs uint64 > 2^63" or "error text contains ErrNotBootstrapped".
	Decision []string `json:"decision"`
}

// Mode returns how an answer is compared with the fixture: Compare when set; otherwise CompareExact for
// a JSON string or null body or a text body, CompareStatus without a body, CompareShape for the rest.
func (e Exchange) Mode() string {
	body := bytes.TrimSpace(e.Body)
	switch {
	case e.Compare != "":
		return e.Compare
	case len(body) == 0 && e.Text == "":
		return CompareStatus
	case len(body) == 0, body[0] == '"', string(body) == "null":
		return CompareExact
	}
	return CompareShape
}

// Answer returns the body bytes PD sends: Text as is, or Body indented by two spaces with a trailing
// newline, as PD renders JSON.
func (e Exchange) Answer() []byte {
	if len(e.Body) == 0 {
		return []byte(e.Text)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, e.Body, "", "  "); err != nil {
		return append([]byte(nil), e.Body...)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// Key is "METHOD path", e.g. "GET /pd/api/v1/stores?state=2".
func (e Exchange) Key() string { return e.Method + " " + e.Path }

//go:embed testdata/*.json
var fixtures embed.FS

var (
	loadOnce sync.Once
	loaded   []Exchange
	loadErr  error
)

// Exchanges returns every fixture exchange, by file and then in file order (a fresh slice each call). It
// panics when a fixture is malformed, which a test of this package catches.
func Exchanges() []Exchange {
	loadOnce.Do(func() { loaded, loadErr = load(fixtures) })
	if loadErr != nil {
		panic(loadErr)
	}
	return append([]Exchange(nil), loaded...)
}

// Phase returns the exchanges recorded in phase itself (not inherited), in fixture order.
func Phase(phase string) []Exchange {
	var out []Exchange
	for _, e := range Exchanges() {
		if e.Phase == phase {
			out = append(out, e)
		}
	}
	return out
}

// Phases returns the phases that have exchanges, sorted.
func Phases() []string {
	seen := map[string]bool{}
	for _, e := range Exchanges() {
		seen[e.Phase] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// load reads every testdata/*.json file of fsys (a JSON array of Exchange) and checks it.
func load(fsys fs.FS) ([]Exchange, error) {
	files, err := fs.Glob(fsys, "testdata/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var all []Exchange
	names := map[string]bool{}
	for _, file := range files {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		var list []Exchange
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&list); err != nil {
			return nil, fmt.Errorf("pdcontract: %s: %w", path.Base(file), err)
		}
		for _, e := range list {
			if err := check(e); err != nil {
				return nil, fmt.Errorf("pdcontract: %s: %s: %w", path.Base(file), e.Name, err)
			}
			if names[e.Name] {
				return nil, fmt.Errorf("pdcontract: %s: duplicate exchange %q", path.Base(file), e.Name)
			}
			names[e.Name] = true
			all = append(all, e)
		}
	}
	return all, nil
}

// check rejects an exchange that lacks what a test needs.
func check(e Exchange) error {
	switch {
	case e.Name == "" || e.Phase == "" || e.Method == "" || e.Path == "":
		return fmt.Errorf("name, phase, method and path are required")
	case e.Status == 0:
		return fmt.Errorf("no status")
	case len(e.Decision) == 0:
		return fmt.Errorf("no decision: say what the operator depends on")
	case len(e.Body) > 0 && e.Text != "":
		return fmt.Errorf("both a JSON body and a text body")
	case len(e.Body) > 0 && !json.Valid(e.Body):
		return fmt.Errorf("body is not JSON")
	case len(e.Request) > 0 && !json.Valid(e.Request):
		return fmt.Errorf("request is not JSON")
	}
	switch e.Compare {
	case "", CompareExact, CompareShape, CompareStatus:
		return nil
	}
	return fmt.Errorf("unknown comparison %q", e.Compare)
}
