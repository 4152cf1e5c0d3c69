package pdcontract

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFixturesLoad(t *testing.T) {
	all, err := load(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, p := range Phases() {
		known[p] = true
	}
	big := false
	for _, e := range all {
		if e.Next != "" && !known[e.Next] {
			t.Errorf("%s: next phase %q has no exchange", e.Name, e.Next)
		}
		if p := Parent(e.Phase); p != "" && !known[p] {
			t.Errorf("%s: parent phase %q has no exchange", e.Name, p)
		}
		if !strings.HasPrefix(e.Name, e.Phase+"/") {
			t.Errorf("%s: the name does not start with its phase %q", e.Name, e.Phase)
		}
		big = big || strings.Contains(string(e.Body), "13835058055282163713")
	}
	if !big || uint64(13835058055282163713) <= math.MaxInt64 {
		t.Errorf("no fixture carries an ID above 2^63")
	}
}

func TestPDServesPhasesAndMoves(t *testing.T) {
	pd := NewPD(PhaseBootstrapped)
	srv := httptest.NewServer(pd)
	defer srv.Close()
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
	}
	if code, ct, body := get("/pd/api/v1/scheduler-config/evict-leader-scheduler/list"); code != 404 ||
		ct != "text/plain; charset=utf-8" || body != "404 page not found\n" {
		t.Errorf("config list before eviction = %d %q %q", code, ct, body)
	}
	resp, err := http.Post(srv.URL+"/pd/api/v1/schedulers", "application/json",
		strings.NewReader(`{"store_id": 103, "name": "evict-leader-scheduler"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || pd.Phase() != PhaseEvictingOne {
		t.Fatalf("POST evict-leader = %d, phase %s", resp.StatusCode, pd.Phase())
	}
	code, _, body := get("/pd/api/v1/scheduler-config/evict-leader-scheduler/list")
	var cfg map[string]any
	if code != 200 || json.Unmarshal([]byte(body), &cfg) != nil || cfg["batch"] != 3.0 {
		t.Errorf("config list while evicting = %d %q", code, body)
	}
	// Inherited from bootstrapped.
	if code, _, _ := get("/pd/api/v1/stores"); code != 200 {
		t.Errorf("stores while evicting = %d", code)
	}
	if code, _, _ := get("/pd/api/v1/made-up"); code != http.StatusNotImplemented || len(pd.Unmatched()) != 1 {
		t.Errorf("unmatched request = %d, recorded %v", code, pd.Unmatched())
	}
	if len(pd.Served()) != 4 {
		t.Errorf("served = %v", pd.Served())
	}
}

func TestAnswerRendering(t *testing.T) {
	e := Exchange{Body: json.RawMessage(`"\"[PD:core:ErrStoreNotFound]store 7 not found\"\n"`)}
	if got := string(e.Answer()); got != `"\"[PD:core:ErrStoreNotFound]store 7 not found\"\n"`+"\n" || e.Mode() != CompareExact {
		t.Errorf("answer = %q, mode %s", got, e.Mode())
	}
	if m := (Exchange{Body: json.RawMessage(`{"a": 1}`)}).Mode(); m != CompareShape {
		t.Errorf("object mode = %s", m)
	}
	if m := (Exchange{}).Mode(); m != CompareStatus {
		t.Errorf("empty mode = %s", m)
	}
}
