package simulator

import (
	"net/http"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// addHeteroPods adds Running, Ready pods <hetero>-<comp>-0..n-1 of the heterogeneous cluster hetero, observed
// with the harness's cluster as the watcher does, and tells the registry that hetero joins it.
func (h *harness) addHeteroPods(hetero string, comp Component, n int) {
	owner := ClusterKey{Namespace: h.key.Namespace, Name: hetero}
	for i := 0; i < n; i++ {
		name := hetero + "-" + string(comp) + "-" + string(rune('0'+i))
		h.pods[name] = PodObservation{Name: name, Component: comp, Running: true, Ready: true, PVCUID: "uid-" + name, Owner: owner}
	}
	h.reg.Observe(owner, ClusterObservation{TidbCluster: &TidbClusterInfo{Joins: &h.key}})
	h.observe()
}

// storeByPod returns the store of pod and its advertised address.
func (h *harness) storeByPod(pod string) (uint64, string, string) {
	var id uint64
	var addr, status string
	h.with(func(c *Cluster) {
		for _, s := range c.stores {
			if s.ident.pod == pod {
				id, addr, status = s.id, c.storeAddress(s), c.storeStatusAddress(s)
			}
		}
	})
	if id == 0 {
		h.t.Fatalf("no store of pod %s", pod)
	}
	return id, addr, status
}

func TestHeterogeneousStoresJoinTheReferencedPD(t *testing.T) {
	h := newHarness(t)
	h.bootstrap(3, 3, 1)
	h.addHeteroPods("hetero", ComponentTiKV, 2)
	h.addHeteroPods("hetero", ComponentTiFlash, 1)
	h.addHeteroPods("hetero", ComponentTiDB, 1)

	id, addr, status := h.storeByPod("hetero-tikv-1")
	if id != 5 || addr != "hetero-tikv-1.hetero-tikv-peer.default.svc:20160" || status != "hetero-tikv-1.hetero-tikv-peer.default.svc:20180" {
		t.Errorf("hetero-tikv-1: store %d at %s (status %s), want store 5 in the referenced PD's ID sequence, own names", id, addr, status)
	}
	if _, addr, _ := h.storeByPod("hetero-tiflash-0"); addr != "hetero-tiflash-0.hetero-tiflash-peer.default.svc:3930" {
		t.Errorf("TiFlash store address %s", addr)
	}
	stores := decode[pdapi.StoresInfo](t, h.pd("GET", "/pd/api/v1/stores", ""))
	if stores.Count != 6 {
		t.Errorf("referenced PD lists %d stores, want 3 own + 2 TiKV + 1 TiFlash of the heterogeneous cluster", stores.Count)
	}
	wantStatus(t, h.proxy("GET", "http://hetero-tikv-0.hetero-tikv-peer.default:20180/metrics", ""), http.StatusOK)
	if r := h.proxy("GET", "http://hetero-tiflash-0.hetero-tiflash-peer.default:20292/tiflash/store-status", ""); r.body != "Running" {
		t.Errorf("heterogeneous TiFlash store-status %d %q, want Running", r.status, r.body)
	}
	wantStatus(t, h.proxy("GET", "http://hetero-tidb.default:10080/status", ""), http.StatusOK)
	// The heterogeneous cluster has no PD; its names do not reach the referenced cluster's pods.
	wantStatus(t, h.proxy("GET", "http://hetero-pd.default:2379/pd/api/v1/stores", ""), http.StatusBadGateway)
	wantStatus(t, h.proxy("GET", "http://basic-tikv-0.hetero-tikv-peer.default:20180/metrics", ""), http.StatusBadGateway)
	wantStatus(t, h.proxy("GET", "http://hetero-tikv-0.basic-tikv-peer.default:20180/metrics", ""), http.StatusBadGateway)
}

func TestHeterogeneousStoreLifecycle(t *testing.T) {
	h := newHarness(t)
	h.bootstrap(3, 3, 1)
	h.addHeteroPods("hetero", ComponentTiKV, 2)
	id, _, _ := h.storeByPod("hetero-tikv-1")

	h.setReady("hetero-tikv-1", false)
	h.step(h.reg.Timings().MaxStoreDownTime + 1)
	if got := h.storeState(id); got != pdapi.StoreStateNameDown {
		t.Fatalf("not Ready heterogeneous store is %s, want Down", got)
	}
	h.setReady("hetero-tikv-1", true)
	h.step(1)
	wantStatus(t, h.pd("DELETE", "/pd/api/v1/store/"+strconv.FormatUint(id, 10), ""), http.StatusOK)
	if got := h.storeState(id); got != pdapi.StoreStateNameOffline {
		t.Fatalf("deleted store is %s, want Offline", got)
	}
	h.step(h.reg.Timings().RegionMigrationTime)
	if got := h.storeState(id); got != pdapi.StoreStateNameTombstone {
		t.Fatalf("store is %s after the migration, want Tombstone", got)
	}
	h.deletePod("hetero-tikv-1")
	if _, addr, _ := h.storeByPod("hetero-tikv-1"); addr != "hetero-tikv-1.hetero-tikv-peer.default.svc:20160" {
		t.Errorf("the tombstone's address changed to %s once its pod went", addr)
	}
}

func TestJoinedCluster(t *testing.T) {
	tc := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "h", "namespace": "ns"}, "spec": spec,
		}}
	}
	cases := []struct {
		spec map[string]any
		want *ClusterKey
	}{
		{map[string]any{"cluster": map[string]any{"name": "basic"}}, &ClusterKey{"ns", "basic"}},
		{map[string]any{"cluster": map[string]any{"name": "basic", "namespace": "other"}}, &ClusterKey{"other", "basic"}},
		{map[string]any{"cluster": map[string]any{"name": "basic"}, "pd": map[string]any{}}, nil},
		{map[string]any{}, nil},
	}
	for _, c := range cases {
		got := joinedCluster(tc(c.spec))
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("joinedCluster(%v) = %v, want %v", c.spec, got, c.want)
		}
	}
}
