package simulator

import (
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func TestPDReplicationFromTidbClusterConfig(t *testing.T) {
	t.Parallel()
	tc := func(cfg any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"pd": map[string]any{"config": cfg}}}}
	}
	toml := tc("[replication]\nmax-replicas = 5\nenable-placement-rules = false\n")
	if got := pdMaxReplicas(toml); got != 5 {
		t.Errorf("TOML max-replicas = %d, want 5", got)
	}
	if got := pdPlacementRules(toml); got == nil || *got {
		t.Errorf("TOML enable-placement-rules = %v, want false", got)
	}
	m := tc(map[string]any{"replication": map[string]any{"max-replicas": int64(1), "enable-placement-rules": "true"}})
	if got, rules := pdMaxReplicas(m), pdPlacementRules(m); got != 1 || rules == nil || !*rules {
		t.Errorf("map: max-replicas = %d, enable-placement-rules = %v; want 1 and true", got, rules)
	}
	if pdMaxReplicas(tc("")) != 0 || pdPlacementRules(tc("")) != nil {
		t.Error("an empty config names no replication settings")
	}
}

// observeTC observes the harness pods with a TidbCluster whose PD config carries info.
func (h *harness) observeTC(info *TidbClusterInfo) {
	obs := ClusterObservation{HasPVCs: true, TidbCluster: info}
	for _, p := range h.pods {
		obs.Pods = append(obs.Pods, p)
	}
	h.reg.Observe(h.key, obs)
}

func TestPDStartsFromTidbClusterReplicationConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	off := false
	info := &TidbClusterInfo{PDMaxReplicas: 1, PDPlacementRules: &off}
	h.observeTC(info)
	h.addPods(ComponentPD, 1)
	h.observeTC(info)
	h.addPods(ComponentTiKV, 1)
	h.addPods(ComponentTiFlash, 1)
	h.observeTC(info)
	got := decode[pdapi.ReplicationConfig](t, h.pd(http.MethodGet, "/pd/api/v1/config/replicate", ""))
	if got.MaxReplicas != 1 || got.EnablePlacementRules {
		t.Fatalf("replication = %+v, want max-replicas 1 and placement rules off from spec.pd.config", got)
	}
	h.with(func(c *Cluster) {
		if c.upStores(ComponentTiFlash) != 0 {
			t.Error("a TiFlash store registered while placement rules are off")
		}
	})
	wantStatus(t, h.pd(http.MethodPost, "/pd/api/v1/config/replicate", `{"enable-placement-rules":"true","max-replicas":3}`), http.StatusOK)
	h.observeTC(info) // the config file no longer wins over what PD holds
	got = decode[pdapi.ReplicationConfig](t, h.pd(http.MethodGet, "/pd/api/v1/config/replicate", ""))
	if got.MaxReplicas != 3 || !got.EnablePlacementRules {
		t.Fatalf("replication = %+v after POST /config/replicate, want max-replicas 3 and placement rules on", got)
	}
	h.with(func(c *Cluster) {
		if c.upStores(ComponentTiFlash) != 1 {
			t.Error("the TiFlash store did not register once placement rules were on")
		}
	})
}

func TestPDConfigFileAppliesOnlyAtBootstrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.observeTC(&TidbClusterInfo{})
	h.addPods(ComponentPD, 1)
	h.observeTC(&TidbClusterInfo{})
	h.observeTC(&TidbClusterInfo{PDMaxReplicas: 5})
	got := decode[pdapi.ReplicationConfig](t, h.pd(http.MethodGet, "/pd/api/v1/config/replicate", ""))
	if got.MaxReplicas != 3 || !got.EnablePlacementRules {
		t.Fatalf("replication = %+v, want PD's defaults (3, on): the config changed after PD started", got)
	}
}
