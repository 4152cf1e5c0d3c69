package simulator

import (
	"net/http"
	"testing"
)

func TestPDNotBootstrappedAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/pd/api/v1/stores", ""}, {"GET", "/pd/api/v1/stores?state=x", ""}, {"GET", "/pd/api/v1/store/1", ""},
		{"GET", "/pd/api/v1/regions", ""}, {"GET", "/pd/api/v1/schedulers", ""}, {"GET", "/pd/api/v1/operators", ""},
		{"GET", "/pd/api/v1/config/rules", ""}, {"GET", "/pd/api/v1/config/rules/group/tiflash", ""},
		{"GET", "/pd/api/v1/min-resolved-ts", ""}, {"DELETE", "/pd/api/v1/store/1", ""},
		{"POST", "/pd/api/v1/schedulers", `{"name":"evict-leader-scheduler","store_id":1}`},
		{"POST", "/pd/api/v1/config/replicate", `{"enable-placement-rules":"false"}`},
	} {
		r := h.pd(req.method, req.path, req.body)
		if r.status != http.StatusInternalServerError || decode[string](t, r) != msgNotBootstrapped {
			t.Errorf("%s %s = %d %s, want 500 ErrNotBootstrapped", req.method, req.path, r.status, r.body)
		}
	}
	r := h.pd("GET", "/pd/api/v1/scheduler-config/evict-leader-scheduler/list", "")
	if r.status != http.StatusNotAcceptable || decode[string](t, r) != msgNotBootstrapped {
		t.Errorf("evict-leader config = %d %s, want 406 ErrNotBootstrapped", r.status, r.body)
	}
	if v := decode[string](t, h.pd("GET", "/pd/api/v1/config/cluster-version", "")); v != "0.0.0" {
		t.Errorf("cluster-version = %q, want 0.0.0", v)
	}
	if st := decode[map[string]any](t, h.pd("GET", "/pd/api/v1/cluster/status", "")); st["is_initialized"] != false {
		t.Errorf("cluster status = %v, want is_initialized false", st)
	}

	h.addPods(ComponentTiKV, 3)
	if v := decode[string](t, h.pd("GET", "/pd/api/v1/config/cluster-version", "")); v != "8.5.0" {
		t.Errorf("cluster-version = %q, want the stores' 8.5.0", v)
	}
	wantStatus(t, h.pd("GET", "/pd/api/v1/regions", ""), http.StatusOK)
	wantStatus(t, h.pd("GET", "/pd/api/v1/operators", ""), http.StatusOK)
	wantStatus(t, h.pd("GET", "/pd/api/v1/min-resolved-ts", ""), http.StatusOK)
	if rules := decode[[]map[string]any](t, h.pd("GET", "/pd/api/v1/config/rules", "")); len(rules) != 1 || rules[0]["group_id"] != "pd" {
		t.Errorf("rules = %v, want PD's default rule", rules)
	}
	region := h.pd("GET", "/pd/api/v1/region/id/5", "")
	wantStatus(t, region, http.StatusOK)
	if z := decode[zeroRegion](t, region); z.ID != 0 {
		t.Errorf("unknown region = %+v, want PD's zero region", z)
	}
}
