package simulator

import (
	"net/http"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestTiDBSetLabels: POST /labels merges a JSON object into the server's
// labels, /info and the admin state report them, a restarted process has
// none, and a body that is not an object of strings is 400.
func TestTiDBSetLabels(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 2)
	url := func(pod, path string) string { return "http://" + pod + ".basic-tidb-peer.default:10080" + path }
	wantStatus(t, h.proxy(http.MethodPost, url("basic-tidb-0", "/labels"), `{"zone":"zone-a"}`), http.StatusOK)
	wantStatus(t, h.proxy(http.MethodPost, url("basic-tidb-0", "/labels"), `{"host":"n0"}`), http.StatusOK)
	info := decode[tidbInfo](t, h.proxy(http.MethodPost, url("basic-tidb-0", "/info"), ""))
	if info.Labels["zone"] != "zone-a" || info.Labels["host"] != "n0" {
		t.Errorf("basic-tidb-0 /info labels = %v, want zone=zone-a host=n0", info.Labels)
	}
	if other := decode[tidbInfo](t, h.proxy(http.MethodPost, url("basic-tidb-1", "/info"), "")); len(other.Labels) != 0 {
		t.Errorf("basic-tidb-1 /info labels = %v, want none", other.Labels)
	}
	h.with(func(c *Cluster) {
		for _, s := range c.snapshot(h.clock.Now()).TiDBServers {
			if s.Name == "basic-tidb-0" && (s.Labels["zone"] != "zone-a" || s.LabelWrites != 2) {
				t.Errorf("admin state of basic-tidb-0: labels %v after %d writes, want zone=zone-a after 2", s.Labels, s.LabelWrites)
			}
		}
	})
	for _, bad := range []string{`{`, `["zone"]`, `{"zone":1}`} {
		if r := h.proxy(http.MethodPost, url("basic-tidb-1", "/labels"), bad); r.status != http.StatusBadRequest {
			t.Errorf("POST /labels %s = %d, want 400", bad, r.status)
		}
	}
	p := h.pods["basic-tidb-0"]
	p.Restarts++
	h.setPod(p)
	if info := decode[tidbInfo](t, h.proxy(http.MethodPost, url("basic-tidb-0", "/info"), "")); len(info.Labels) != 0 {
		t.Errorf("a restarted TiDB kept labels %v; TiDB holds them in memory only", info.Labels)
	}
}

func TestPDLocationLabelsFromTidbClusterConfig(t *testing.T) {
	t.Parallel()
	tc := func(cfg any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"pd": map[string]any{"config": cfg}}}}
	}
	cases := []struct {
		name string
		u    *unstructured.Unstructured
		want []string
	}{
		{"map", tc(map[string]any{"replication": map[string]any{"location-labels": []any{"zone", "host"}}}), []string{"zone", "host"}},
		{"TOML", tc("[replication]\nlocation-labels = [\"zone\", \"rack\"]\n"), []string{"zone", "rack"}},
		{"comma string", tc(map[string]any{"replication": map[string]any{"location-labels": "zone, host"}}), []string{"zone", "host"}},
		{"bad TOML", tc("[replication\n"), nil},
		{"no config", &unstructured.Unstructured{Object: map[string]any{}}, nil},
	}
	for _, c := range cases {
		if got := pdLocationLabels(c.u); !slices.Equal(got, c.want) {
			t.Errorf("%s: pdLocationLabels = %v, want %v", c.name, got, c.want)
		}
	}

	h := newHarness(t)
	h.bootstrap(1, 1, 0)
	obs := ClusterObservation{HasPVCs: true, TidbCluster: &TidbClusterInfo{PDLocationLabels: []string{"zone", "host"}}}
	for _, p := range h.pods {
		obs.Pods = append(obs.Pods, p)
	}
	h.reg.Observe(h.key, obs)
	cfg := h.pd(http.MethodGet, "/pd/api/v1/config", "")
	wantStatus(t, cfg, http.StatusOK)
	got := decode[pdapi.Config](t, cfg)
	if !slices.Equal(got.Replication.LocationLabels, pdapi.StringSlice{"zone", "host"}) {
		t.Errorf("PD config location-labels = %v, want [zone host] from the TidbCluster", got.Replication.LocationLabels)
	}
}

// TestStoreLabelWritesInAdminState: PD's store-label API merges labels and
// the admin state counts the accepted requests, so tests can tell a
// converged operator from one that keeps writing.
func TestStoreLabelWritesInAdminState(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.bootstrap(1, 1, 0)
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/store/1/label", `{"zone":"zone-a"}`), http.StatusOK)
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/store/1/label", `{"host":"n0"}`), http.StatusOK)
	h.with(func(c *Cluster) {
		st := c.snapshot(h.clock.Now())
		if len(st.Stores) != 1 || st.Stores[0].LabelWrites != 2 || st.Stores[0].Labels["zone"] != "zone-a" || st.Stores[0].Labels["host"] != "n0" {
			t.Errorf("stores = %+v, want store 1 with zone=zone-a host=n0 after 2 label writes", st.Stores)
		}
	})
}
