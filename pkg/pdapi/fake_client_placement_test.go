package pdapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func tiflashRule(id string, count int) pdapi.PlacementRule {
	return pdapi.PlacementRule{GroupID: pdapi.PlacementGroupTiFlash, ID: id, Role: pdapi.PeerRoleLearner, Count: count,
		LabelConstraints: []pdapi.LabelConstraint{{Key: "engine", Op: "in", Values: []string{"tiflash"}}}}
}

func TestFakeClientPlacementRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	f.SetPlacementRules(tiflashRule("table-45-r", 2), tiflashRule("table-47-r", 3),
		pdapi.PlacementRule{GroupID: "pd", ID: "default", Role: "voter", Count: 5})

	// Disabled (the fake's default config): 412 for the rules, 0 replicas.
	if _, err := f.GetPlacementRules(ctx, "tiflash"); !errors.Is(err, pdapi.ErrPlacementRulesDisabled) || !pdapi.IsStatus(err, 412) {
		t.Errorf("GetPlacementRules while disabled: err = %v, want a 412 ErrPlacementRulesDisabled", err)
	}
	if n, err := f.MaxTiFlashReplicas(ctx); n != 0 || err != nil {
		t.Errorf("MaxTiFlashReplicas while disabled = %d, %v; want 0", n, err)
	}

	check(t, "EnablePlacementRules", f.EnablePlacementRules(ctx))
	cfg, _ := f.GetConfig(ctx)
	if !cfg.Replication.EnablePlacementRules {
		t.Fatal("EnablePlacementRules did not change the config")
	}
	rules, err := f.GetPlacementRules(ctx, "tiflash")
	check(t, "GetPlacementRules", err)
	if diff := cmp.Diff([]pdapi.PlacementRule{tiflashRule("table-45-r", 2), tiflashRule("table-47-r", 3)}, rules); diff != "" {
		t.Errorf("tiflash rules (-want +got):\n%s", diff)
	}
	rules[0].LabelConstraints[0].Values[0] = "changed by the caller"
	if n, err := f.MaxTiFlashReplicas(ctx); n != 3 || err != nil {
		t.Errorf("MaxTiFlashReplicas = %d, %v; want 3 (the pd group's count does not count)", n, err)
	}
	again, _ := f.GetPlacementRules(ctx, "tiflash")
	if again[0].LabelConstraints[0].Values[0] != "tiflash" {
		t.Error("fake rules leaked through a slice")
	}
	if empty, _ := f.GetPlacementRules(ctx, "other"); empty == nil || len(empty) != 0 {
		t.Errorf("unknown group = %#v, want an empty slice", empty)
	}
	if diff := cmp.Diff([]pdapi.Call{{Method: pdapi.MethodEnablePlacementRules}}, f.WriteCalls()); diff != "" {
		t.Errorf("write calls (-want +got):\n%s", diff)
	}
}

func TestFakeClientPlacementRulesNeedBootstrap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	f.SetBootstrapped(false)
	for name, err := range map[string]error{
		"EnablePlacementRules": f.EnablePlacementRules(ctx),
		"MaxTiFlashReplicas":   second(f.MaxTiFlashReplicas(ctx)),
		"GetPlacementRules":    second(f.GetPlacementRules(ctx, "tiflash")),
	} {
		if !errors.Is(err, pdapi.ErrTiKVNotBootstrapped) || !pdapi.IsStatus(err, 500) {
			t.Errorf("%s before bootstrap: err = %v, want a 500 ErrTiKVNotBootstrapped", name, err)
		}
	}
	if cfg, _ := f.GetConfig(ctx); cfg.Replication.EnablePlacementRules {
		t.Error("a refused EnablePlacementRules changed the config")
	}
}

func TestFakeClientCannotDisablePlacementRulesWithTiFlash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	check(t, "EnablePlacementRules", f.EnablePlacementRules(ctx))
	flash := fakeStore(9, pdapi.StoreStateOffline, "Offline")
	flash.Store.Labels = []*pdapi.StoreLabel{{Key: "engine", Value: "tiflash"}}
	f.SetStores(flash)
	off := pdapi.ReplicationConfigUpdate{EnablePlacementRules: ptr(false)}
	if err := f.UpdateReplicationConfig(ctx, off); !pdapi.IsStatus(err, 500) {
		t.Errorf("disabling with a TiFlash store: err = %v, want 500", err)
	}
	flash.Store.State, flash.Store.StateName = pdapi.StoreStateTombstone, "Tombstone"
	f.SetStores(flash)
	check(t, "disable with a Tombstone TiFlash store", f.UpdateReplicationConfig(ctx, off))
}

func second[T any](_ T, err error) error { return err }
