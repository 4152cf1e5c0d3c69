package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Samples of Pump answers. The status is tidb-binlog's docs/http_api sample (pump.HTTPStatus over
// node.Status); the action answer is pkg/util.Response, whose data has no omitempty (the docs' sample drops
// it by hand).
const (
	pumpSampleStatus = `{"status": {"ip-172-16-5-71:8250": {"nodeId": "ip-172-16-5-71:8250", "host": "172.16.5.71:8250",
	  "state": "online", "isAlive": false, "score": 0, "label": null, "maxCommitTS": 412518831548007863,
	  "updateTS": 412518831338292471}}, "CommitTS": 412518831849473230, "Checkpoint": {}, "ErrMsg": ""}`
	pumpSampleStatusError = `{"status": null, "CommitTS": 0, "Checkpoint": {}, "ErrMsg": "context canceled"}`
	pumpSampleAction      = `{"message": "apply action close success!", "code": 200, "data": null}`
)

func TestPumpContract(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.addPods(ComponentPump, 2)

	r := h.pumpAt("basic-pump-0", http.MethodGet, "/status")
	wantStatus(t, r, http.StatusOK)
	assertPumpStatusShape(t, r.body)
	// json.Encoder: compact with a trailing newline; Pump sets no Content-Type, net/http sniffs text/plain.
	if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || !strings.HasPrefix(r.body, `{"status":{"basic-pump-0:8250":{"nodeId":`) ||
		!strings.HasSuffix(r.body, "}\n") || strings.Count(r.body, "\n") != 1 {
		t.Errorf("/status rendering: %q %q", ct, r.body)
	}

	r = h.pumpAt("basic-pump-1", http.MethodPut, "/state/basic-pump-1:8250/close")
	wantStatus(t, r, http.StatusOK)
	assertSameShape(t, pumpSampleAction, r.body)
	// unrolled/render with IndentJSON: two spaces, trailing newline.
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=UTF-8" || !strings.HasPrefix(r.body, "{\n  \"message\": ") ||
		!strings.HasSuffix(r.body, "}\n") {
		t.Errorf("action rendering: %q %q", ct, r.body)
	}
	assertSameShape(t, pumpSampleAction, h.pumpAt("basic-pump-1", http.MethodPut, "/state/basic-pump-1:8250/close").body)

	r = h.pumpAt("basic-pump-1", http.MethodGet, "/status")
	wantStatus(t, r, http.StatusOK)
	assertSameShape(t, pumpSampleStatusError, r.body)

	// Every address form of the pod and the headless Service reach a pump.
	for _, host := range []string{
		"basic-pump-0.basic-pump.default", "basic-pump-0.basic-pump.default.svc", "basic-pump-0.basic-pump.default.svc.cluster.local",
		"basic-pump.default", "basic-pump.default.svc.cluster.local",
	} {
		wantStatus(t, h.proxy(http.MethodGet, "http://"+host+":8250/status", ""), http.StatusOK)
	}
}

// assertPumpStatusShape compares a `GET /status` body with pumpSampleStatus: the status map is keyed by
// node IDs, so every entry is compared with the sample's entry and the rest with the sample re-keyed.
func assertPumpStatusShape(t *testing.T, body string) {
	t.Helper()
	var sample, got map[string]any
	if err := json.Unmarshal([]byte(pumpSampleStatus), &sample); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("status is not JSON: %v: %s", err, body)
	}
	entries, _ := got["status"].(map[string]any)
	if len(entries) == 0 {
		t.Fatalf("status lists no node: %s", body)
	}
	sampleEntry, _ := json.Marshal(sample["status"].(map[string]any)["ip-172-16-5-71:8250"])
	for id, e := range entries {
		data, _ := json.Marshal(e)
		assertSameShape(t, string(sampleEntry), string(data))
		got["status"] = map[string]any{"ip-172-16-5-71:8250": e}
		if e.(map[string]any)["nodeId"] != id {
			t.Errorf("entry %s has nodeId %v", id, e.(map[string]any)["nodeId"])
		}
	}
	rekeyed, _ := json.Marshal(got)
	assertSameShape(t, pumpSampleStatus, string(rekeyed))
}
