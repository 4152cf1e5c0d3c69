package simulator

import (
	"net/http"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestCombinedEvictLeaderScheduler: a PD v8.5 keeps every evicted store in one evict-leader-scheduler.
func TestCombinedEvictLeaderScheduler(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 3, 0)
	const list = "/pd/api/v1/scheduler-config/evict-leader-scheduler/list"
	none := h.pd(http.MethodGet, list, "")
	if none.status != http.StatusNotFound || none.body != "404 page not found\n" ||
		none.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("config without the scheduler = %d %q %q, want PD's text/plain 404", none.status, none.header.Get("Content-Type"), none.body)
	}
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1}`, 200, "\"The scheduler is created.\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1}`, 200, "\"The scheduler has been applied to the store.\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":2}`, 200, "\"The scheduler has been applied to the store.\"\n"},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":99}`, 500, `"\"[PD:core:ErrStoreNotFound]store 99 not found\"\n"` + "\n"},
	}
	for i, tc := range cases {
		if r := h.pd(tc.method, tc.path, tc.body); r.status != tc.status || r.body != tc.want {
			t.Errorf("#%d %s %s = %d %q, want %d %q", i, tc.method, tc.body, r.status, r.body, tc.status, tc.want)
		}
	}
	names := decode[[]string](t, h.pd(http.MethodGet, "/pd/api/v1/schedulers", ""))
	if n := countOf(names, "evict-leader-scheduler"); n != 1 || len(names) != 6 {
		t.Errorf("schedulers = %v, want evict-leader-scheduler once among the defaults", names)
	}
	cfg := decode[pdapi.EvictLeaderSchedulerConfig](t, h.pd(http.MethodGet, list, ""))
	if len(cfg.StoreIDRanges) != 2 || len(cfg.StoreIDRanges["1"]) != 1 || len(cfg.StoreIDRanges["2"]) != 1 || cfg.Batch != 3 {
		t.Errorf("config = %+v, want stores 1 and 2 over the whole key space, batch 3", cfg)
	}
	for i, tc := range []struct {
		path   string
		status int
	}{{"evict-leader-scheduler-9", 404}, {"evict-leader-scheduler-1", 200}, {"evict-leader-scheduler-2", 200}, {"evict-leader-scheduler-2", 404}} {
		if r := h.pd(http.MethodDelete, "/pd/api/v1/schedulers/"+tc.path, ""); r.status != tc.status || r.body != "null\n" {
			t.Errorf("#%d DELETE %s = %d %q, want %d null", i, tc.path, r.status, r.body, tc.status)
		}
		if i == 1 && countOf(decode[[]string](t, h.pd(http.MethodGet, "/pd/api/v1/schedulers", "")), "evict-leader-scheduler") != 1 {
			t.Error("the scheduler went while store 2 was still evicted")
		}
	}
	if names := decode[[]string](t, h.pd(http.MethodGet, "/pd/api/v1/schedulers", "")); countOf(names, "evict-leader-scheduler") != 0 {
		t.Errorf("schedulers = %v, want the scheduler gone with its last store", names)
	}
	wantStatus(t, h.pd(http.MethodGet, list, ""), http.StatusNotFound)
}

func countOf(names []string, name string) int {
	n := 0
	for _, s := range names {
		if s == name {
			n++
		}
	}
	return n
}
