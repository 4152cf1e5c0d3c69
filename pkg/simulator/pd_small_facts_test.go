package simulator

import (
	"net/http"
	"testing"
)

// TestPDv857SmallFacts pins answers recorded from a real PD v8.5.7.
func TestPDv857SmallFacts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 4, 0)
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/pd/api/v1/store/99/label", `{"zone":"z1"}`, 500, "\"[PD:cluster:ErrInvalidStoreID]invalid store id 99, not found\"\n"},
		{"POST", "/pd/api/v1/store/2/label", `{"engine":"tikv"}`, 200, "\"The store's label is updated.\"\n"},
		{"POST", "/pd/api/v1/store/1/state?state=Bogus", "", 400, "\"invalid state Bogus\"\n"},
		{"POST", "/pd/api/v1/store/1/state?state=Offline", "", 200, "\"The store's state is updated.\"\n"},
		{"POST", "/pd/api/v1/store/1/state?state=Up", "", 200, "\"The store's state is updated.\"\n"},
		{"GET", "/pd/api/v1/stores?state=x", "", 500, "\"strconv.Atoi: parsing \\\"x\\\": invalid syntax\"\n"},
		{"GET", "/pd/api/v1/stores?state=7", "", 500, "\"unknown StoreState: 7\"\n"},
		{"DELETE", "/pd/api/v1/members/id/12", "", 500, "\"[PD:etcd:ErrEtcdMemberRemove]etcdserver: member not found: etcdserver: member not found\"\n"},
		{"POST", "/pd/api/v1/leader/transfer/nope", "", 500, "\"no valid pd to transfer etcd leader\"\n"},
	}
	for i, tc := range cases {
		if r := h.pd(tc.method, tc.path, tc.body); r.status != tc.status || r.body != tc.want {
			t.Errorf("#%d %s %s %s = %d %q, want %d %q", i, tc.method, tc.path, tc.body, r.status, r.body, tc.status, tc.want)
		}
	}
	store := decode[map[string]map[string]any](t, h.pd(http.MethodGet, "/pd/api/v1/store/2", ""))
	if labels, _ := store["store"]["labels"].([]any); len(labels) != 1 {
		t.Errorf("store 2 labels = %v, want engine=tikv", store["store"]["labels"])
	}
	if _, has := store["store"]["state"]; has || store["store"]["node_state"] != float64(1) {
		t.Errorf("an Up store = %v, want no state and node_state 1", store["store"])
	}
	if _, ok := store["status"]["capacity"].(string); !ok {
		t.Errorf("capacity = %v, want a string", store["status"]["capacity"])
	}
	status := decode[map[string]any](t, h.pd("GET", "/pd/api/v1/cluster/status", ""))
	if v, ok := status["replication_status"]; !ok || v != "" {
		t.Errorf("cluster status = %v, want replication_status \"\"", status)
	}
	leader := decode[map[string]any](t, h.pd("GET", "/pd/api/v1/leader", ""))
	if len(leader) != 4 {
		t.Errorf("leader = %v, want only name, member_id, peer_urls and client_urls", leader)
	}
}
