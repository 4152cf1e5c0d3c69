package simulator_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/pkg/tiflashapi"
)

// proxiedClients hands the env's proxied client to the operator's per-pod clients.
type proxiedClients struct{ c *http.Client }

func (p proxiedClients) Get(string, string, bool) (*http.Client, error) { return p.c, nil }

// addTiFlash adds n Running, Ready TiFlash pods to the env's cluster.
func (e *env) addTiFlash(n int) {
	for i := 0; i < n; i++ {
		name := "basic-tiflash-" + string(rune('0'+i))
		e.pods = append(e.pods, simulator.PodObservation{Name: name, Component: simulator.ComponentTiFlash,
			Running: true, Ready: true, PVCUID: "u-" + name})
	}
	e.reg.Observe(simulator.ClusterKey{Namespace: "default", Name: "basic"}, simulator.ClusterObservation{Pods: e.pods, HasPVCs: true})
}

// TestTiFlashThroughTheOperatorsClients drives the TiFlash contract end to end: the admin API sets table
// replicas, and the operator's own PD and TiFlash clients read them through the proxy.
func TestTiFlashThroughTheOperatorsClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addTiFlash(2)
	pd := pdapi.NewClientWithHTTP("http://basic-pd.default:2379", e.proxy)

	if n, err := pd.MaxTiFlashReplicas(e.ctx); n != 0 || err != nil {
		t.Fatalf("MaxTiFlashReplicas without rules = %d, %v", n, err)
	}
	if _, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "basic", 45, 2); err != nil {
		t.Fatalf("SetTiFlashReplicas: %v", err)
	}
	list, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "basic", 47, 1)
	if err != nil || len(list) != 2 || list[0].TableID != 45 || list[0].Count != 2 || list[0].RuleID != "table-45-r" {
		t.Fatalf("SetTiFlashReplicas = %+v, %v", list, err)
	}
	if n, err := pd.MaxTiFlashReplicas(e.ctx); n != 2 || err != nil {
		t.Errorf("MaxTiFlashReplicas = %d, %v; want 2", n, err)
	}
	if err := pd.EnablePlacementRules(e.ctx); err != nil {
		t.Errorf("EnablePlacementRules when already enabled: %v", err)
	}

	stores, err := pd.GetStores(e.ctx)
	if err != nil {
		t.Fatalf("GetStores: %v", err)
	}
	flash := 0
	for _, s := range stores.Stores {
		if pdapi.IsTiFlash(s.Store) {
			flash++
		}
	}
	if flash != 2 || stores.Count != 5 {
		t.Errorf("GetStores: %d stores, %d TiFlash; want 5 and 2", stores.Count, flash)
	}

	flashClient := tiflashapi.NewClient(proxiedClients{e.proxy}, 0)
	status, err := flashClient.GetStoreStatus(e.ctx, "default", "basic", "basic-tiflash-1", tiflashapi.Options{})
	if err != nil || status != tiflashapi.StoreStatusRunning {
		t.Errorf("GetStoreStatus = %q, %v; want Running", status, err)
	}
	if _, err := flashClient.GetStoreStatus(e.ctx, "default", "basic", "basic-tiflash-7", tiflashapi.Options{}); err == nil {
		t.Error("GetStoreStatus of a pod that does not exist must fail")
	}

	state, err := e.admin.Cluster(e.ctx, "default", "basic")
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]int{}
	for _, s := range state.Stores {
		engines[s.Engine]++
	}
	if engines["tikv"] != 3 || engines["tiflash"] != 2 || len(state.TiFlashReplicas) != 2 {
		t.Errorf("cluster state: engines %v, replicas %+v", engines, state.TiFlashReplicas)
	}
	if got, err := e.admin.TiFlashReplicas(e.ctx, "default", "basic"); err != nil || len(got) != 2 {
		t.Errorf("TiFlashReplicas = %+v, %v", got, err)
	}
}

func TestTiFlashReplicasAdminErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var se *client.StatusError
	if _, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "basic", 45, -1); !errors.As(err, &se) || se.StatusCode != 400 {
		t.Errorf("negative count: %v, want 400", err)
	}
	if _, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "basic", 0, 1); !errors.As(err, &se) || se.StatusCode != 400 {
		t.Errorf("table 0: %v, want 400", err)
	}
	if _, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "nope", 45, 1); !client.IsNotFound(err) {
		t.Errorf("unknown cluster: %v, want 404", err)
	}
	pd := pdapi.NewClientWithHTTP("http://basic-pd.default:2379", e.proxy)
	off := false
	if err := pd.UpdateReplicationConfig(e.ctx, pdapi.ReplicationConfigUpdate{EnablePlacementRules: &off}); err != nil {
		t.Fatalf("disable placement rules: %v", err)
	}
	if _, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "basic", 45, 1); !errors.As(err, &se) || se.StatusCode != 409 {
		t.Errorf("replicas while placement rules are disabled: %v, want 409", err)
	}
	if _, err := pd.GetPlacementRules(e.ctx, "tiflash"); !errors.Is(err, pdapi.ErrPlacementRulesDisabled) {
		t.Errorf("GetPlacementRules while disabled: %v, want ErrPlacementRulesDisabled", err)
	}
	if err := pd.EnablePlacementRules(e.ctx); err != nil {
		t.Errorf("EnablePlacementRules: %v", err)
	}
	if _, err := e.admin.SetTiFlashReplicas(e.ctx, "default", "basic", 45, 1); err != nil {
		t.Errorf("replicas once enabled again: %v", err)
	}
}
