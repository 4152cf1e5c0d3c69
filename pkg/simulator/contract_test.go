package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/pdapi/pdcontract"
)

// contractDrivers bring a simulated cluster into each phase of the PD contract fixtures
// (pkg/pdapi/pdcontract); the fixtures' IDs are then mapped to the simulator's by contractIDs.
var contractDrivers map[string]func(h *harness)

func init() {
	contractDrivers = map[string]func(h *harness){
		pdcontract.PhaseFresh:        func(h *harness) { h.addPods(ComponentPD, 1) },
		pdcontract.PhaseBootstrapped: contractBootstrap,
		pdcontract.PhaseEvictingOne: func(h *harness) {
			contractBootstrap(h)
			contractWrite(h, http.MethodPost, "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":3}`)
		},
		pdcontract.PhaseEvictingTwo: func(h *harness) {
			contractDrivers[pdcontract.PhaseEvictingOne](h)
			contractWrite(h, http.MethodPost, "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":4}`)
		},
		pdcontract.PhaseStoreOffline: func(h *harness) {
			contractBootstrap(h)
			contractWrite(h, http.MethodDelete, "/pd/api/v1/store/4", "")
		},
		pdcontract.PhaseStoreTombstone: func(h *harness) {
			contractDrivers[pdcontract.PhaseStoreOffline](h)
			h.step(h.reg.Timings().RegionMigrationTime)
		},
		pdcontract.PhaseStoreDisconnected: func(h *harness) {
			contractBootstrap(h)
			h.deletePod("basic-tikv-0")
		},
		pdcontract.PhaseStoreDown: func(h *harness) {
			contractDrivers[pdcontract.PhaseStoreDisconnected](h)
			h.step(h.reg.Timings().MaxStoreDownTime + time.Millisecond)
		},
		pdcontract.PhasePlacementDisabled: func(h *harness) {
			contractBootstrap(h)
			contractWrite(h, http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules":"false"}`)
		},
		pdcontract.PhaseNoLeader: func(h *harness) {
			h.addPods(ComponentPD, 3)
			h.setReady("basic-pd-0", false)
			h.setReady("basic-pd-1", false)
		},
	}
}

// contractBootstrap is PhaseBootstrapped: three PD members, four TiKV stores, store 1 labelled zone=z1.
func contractBootstrap(h *harness) {
	h.bootstrap(3, 4, 0)
	contractWrite(h, http.MethodPost, "/pd/api/v1/store/1/label", `{"zone":"z1"}`)
}

// contractWrite sends a write that brings the simulator into a phase; it must succeed.
func contractWrite(h *harness, method, path, body string) {
	h.t.Helper()
	if r := h.pd(method, path, body); r.status != http.StatusOK {
		h.t.Fatalf("driving the simulator: %s %s %s = %d %s", method, path, body, r.status, r.body)
	}
}

// contractIDs maps the fixtures' IDs (decimal) to the simulator's, read through its PD API: stores
// 101..104 are the stores of pods basic-tikv-0..3, the member IDs those of basic-pd-0..2, and the
// cluster ID the simulated one. It reads nothing that the phase does not answer.
func contractIDs(h *harness) map[string]string {
	ids := map[string]string{}
	fixtureMembers := map[string]string{
		"basic-pd-0": "13835058055282163713", "basic-pd-1": "4611686018427387911", "basic-pd-2": "17293822569102704642",
	}
	if r := h.pd(http.MethodGet, "/pd/api/v1/members", ""); r.status == http.StatusOK {
		mi := decode[pdapi.MembersInfo](h.t, r)
		if mi.Header != nil {
			ids["7302001122334455667"] = strconv.FormatUint(mi.Header.ClusterID, 10)
		}
		for _, m := range mi.Members {
			if fixture, ok := fixtureMembers[m.Name]; ok {
				ids[fixture] = strconv.FormatUint(m.MemberID, 10)
			}
		}
	}
	for _, path := range []string{"/pd/api/v1/stores", "/pd/api/v1/stores?state=2"} {
		r := h.pd(http.MethodGet, path, "")
		if r.status != http.StatusOK {
			continue
		}
		for _, s := range decode[pdapi.StoresInfo](h.t, r).Stores {
			var n int
			if _, err := fmt.Sscanf(s.Store.Address, "basic-tikv-%d.", &n); err == nil {
				ids[strconv.Itoa(101+n)] = strconv.FormatUint(s.Store.ID, 10)
			}
		}
	}
	return ids
}

var contractNumber = regexp.MustCompile(`\d+`)

// contractRewrite replaces every fixture ID in text by the simulator's.
func contractRewrite(text string, ids map[string]string) string {
	return contractNumber.ReplaceAllStringFunc(text, func(n string) string {
		if id, ok := ids[n]; ok {
			return id
		}
		return n
	})
}

// TestContractPD holds the simulator to the recorded contract of a real PD v8.5: for every fixture
// exchange, a simulated cluster is brought into the exchange's phase and must answer the request with
// the same status code and content type, and a body of the same JSON shape (the same text where the
// fixture's is a fixed text).
func TestContractPD(t *testing.T) {
	t.Parallel()
	for _, e := range pdcontract.Exchanges() {
		drive, ok := contractDrivers[e.Phase]
		if !ok {
			t.Errorf("no driver for phase %q of %s", e.Phase, e.Name)
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			drive(h)
			ids := contractIDs(h)
			r := h.pd(e.Method, contractRewrite(e.Path, ids), contractRewrite(string(e.Request), ids))
			for _, d := range contractDiff(e, ids, r) {
				t.Error(d)
			}
			if t.Failed() {
				t.Logf("simulator answered %d %q:\n%s", r.status, r.header.Get("Content-Type"), r.body)
			}
		})
	}
}

// contractDiff lists how r differs from e's answer.
func contractDiff(e pdcontract.Exchange, ids map[string]string, r response) []string {
	var diffs []string
	if r.status != e.Status {
		diffs = append(diffs, fmt.Sprintf("status %d, PD answers %d", r.status, e.Status))
	}
	if ct := r.header.Get("Content-Type"); !strings.EqualFold(ct, e.ContentType) {
		diffs = append(diffs, fmt.Sprintf("content type %q, PD answers %q", ct, e.ContentType))
	}
	mode := e.Mode()
	if mode == pdcontract.CompareStatus {
		return diffs
	}
	want := contractRewrite(string(e.Answer()), ids)
	if len(e.Body) == 0 {
		if r.body != want {
			diffs = append(diffs, fmt.Sprintf("body %q, PD answers %q", r.body, want))
		}
		return diffs
	}
	optional := map[string]bool{}
	for _, k := range e.Optional {
		optional[k] = true
	}
	wv, err := contractDecode(want)
	if err != nil {
		return append(diffs, "bad fixture: "+err.Error())
	}
	gv, err := contractDecode(r.body)
	if err != nil {
		return append(diffs, fmt.Sprintf("body is not JSON (%v), PD answers %s", err, want))
	}
	switch {
	case mode == pdcontract.CompareExact:
		if !reflect.DeepEqual(wv, gv) {
			diffs = append(diffs, fmt.Sprintf("body %s, PD answers %s", strings.TrimSpace(r.body), strings.TrimSpace(want)))
		}
	case len(e.Fields) > 0:
		for _, f := range e.Fields {
			wf, inW := contractField(wv, f)
			gf, inG := contractField(gv, f)
			switch {
			case !inW:
				diffs = append(diffs, "bad fixture: no field "+f)
			case !inG:
				diffs = append(diffs, fmt.Sprintf("$.%s: missing here", f))
			default:
				diffs = append(diffs, contractShape("$."+f, wf, gf, optional)...)
			}
		}
	default:
		diffs = append(diffs, contractShape("$", wv, gv, optional)...)
		diffs = append(diffs, contractNames(wv, gv)...)
	}
	return diffs
}

func contractDecode(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// contractField walks a dotted path of object keys.
func contractField(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// contractValueKeys are the object keys whose values (not only kinds) the operator decides on.
var contractValueKeys = map[string]bool{
	"state": true, "node_state": true, "state_name": true, "health": true, "is_initialized": true,
	"region_loaded": true, "enable-placement-rules": true, "batch": true, "count": true,
}

func contractKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}

// contractShape lists where got's structure differs from want's: object keys, kinds, the values of
// contractValueKeys; each element of an array of got is held to the element of want's it differs least
// from, and an empty array in want must be empty in got.
func contractShape(path string, want, got any, optional map[string]bool) []string {
	if wk, gk := contractKind(want), contractKind(got); wk != gk {
		return []string{fmt.Sprintf("%s: %s here, %s in PD", path, gk, wk)}
	}
	var diffs []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case optional[k]:
			case !inG:
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing here", path, k))
			case !inW:
				diffs = append(diffs, fmt.Sprintf("%s.%s: not in PD's answer", path, k))
			case contractValueKeys[k] && contractKind(wv) != "object" && !reflect.DeepEqual(wv, gv):
				diffs = append(diffs, fmt.Sprintf("%s.%s: %v here, %v in PD", path, k, gv, wv))
			default:
				diffs = append(diffs, contractShape(path+"."+k, wv, gv, optional)...)
			}
		}
	case []any:
		g := got.([]any)
		if len(w) == 0 && len(g) > 0 {
			return []string{fmt.Sprintf("%s: %d elements here, none in PD", path, len(g))}
		}
		for i, gv := range g {
			var best []string
			for j, wv := range w {
				if d := contractShape(fmt.Sprintf("%s[%d]", path, i), wv, gv, optional); j == 0 || len(d) < len(best) {
					best = d
				}
			}
			diffs = append(diffs, best...)
		}
	}
	return diffs
}

// contractNames compares a top-level array of strings (the scheduler names) as a set: the names are
// what the operator reads there.
func contractNames(want, got any) []string {
	w, ok1 := want.([]any)
	g, ok2 := got.([]any)
	if !ok1 || !ok2 || len(w) == 0 || contractKind(w[0]) != "string" {
		return nil
	}
	set := func(list []any) []string {
		var out []string
		for _, v := range list {
			out = append(out, fmt.Sprint(v))
		}
		sort.Strings(out)
		return out
	}
	if ws, gs := set(w), set(g); !reflect.DeepEqual(ws, gs) {
		return []string{fmt.Sprintf("$: names %v here, %v in PD", gs, ws)}
	}
	return nil
}

// TestContractShapeComparison checks the comparison itself on a few hand-made answers.
func TestContractShapeComparison(t *testing.T) {
	t.Parallel()
	cases := []struct {
		want, got string
		ndiff     int
	}{
		{`{"a": 1, "state_name": "Up"}`, `{"a": 2, "state_name": "Up"}`, 0},
		{`{"state_name": "Up"}`, `{"state_name": "Down"}`, 1},
		{`{"store": {"id": 1}}`, `{"store": {"id": 1, "state": 1}}`, 1},
		{`[{"a": 1}, {"a": 1, "b": 2}]`, `[{"a": 5}, {"b": 3, "a": 4}]`, 0},
		{`{"s": []}`, `{"s": [1]}`, 1},
		{`{"n": 18446744073709551615}`, `{"n": "18446744073709551615"}`, 1},
		{`{"a": 1}`, `{"a": 1, "opt": 2}`, 0},
	}
	for _, tc := range cases {
		w, _ := contractDecode(tc.want)
		g, _ := contractDecode(tc.got)
		if d := contractShape("$", w, g, map[string]bool{"opt": true}); len(d) != tc.ndiff {
			t.Errorf("contractShape(%s, %s) = %v, want %d differences", tc.want, tc.got, d, tc.ndiff)
		}
	}
	w, _ := contractDecode(`["evict-leader-scheduler", "balance-leader-scheduler"]`)
	g, _ := contractDecode(`["balance-leader-scheduler", "evict-leader-scheduler-3"]`)
	if len(contractNames(w, g)) != 1 {
		t.Errorf("per-store evict-leader names pass for the combined scheduler")
	}
	if !bytes.Contains(pdcontract.Exchanges()[0].Answer(), []byte("\n")) {
		t.Errorf("fixture answers are not rendered")
	}
}
