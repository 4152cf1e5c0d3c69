package tiflash

import (
	"context"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestNewClusterWithPlacementRulesOffIsCreatedBeforeTiKV: a PD started
// with placement rules off and no TiKV store refuses to turn them on; the
// TiFlash StatefulSet must be created anyway (TiKV, synced next, would
// otherwise never be created and PD never bootstrap), and the rules are
// turned on by a later sync once PD accepts it. Once every pod's store
// registered nothing more is asked of PD.
func TestNewClusterWithPlacementRulesOffIsCreatedBeforeTiKV(t *testing.T) {
	t.Parallel()
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "db")
	pd.SetBootstrapped(false)
	c := New(&component.Env{PD: ctl})
	tc := hookTC("v8.5.0")

	if err := c.PreCreate(context.Background(), tc); err != nil {
		t.Fatalf("PreCreate before PD bootstrapped = %v, want nil so TiFlash and then TiKV get created", err)
	}
	ctx, revisits := flow.WithRevisits(context.Background())
	ctx, blockers := flow.WithBlockers(ctx)
	if err := c.FinishCreate(ctx, tc); err != nil {
		t.Fatalf("FinishCreate before PD bootstrapped = %v, want nil (a revisit)", err)
	}
	if revisits.Err() == nil {
		t.Error("FinishCreate asked for no revisit while placement rules are still off")
	}
	if b := strings.Join(blockers.List(), "; "); !strings.Contains(b, "placement rules") {
		t.Errorf("blockers %q do not name the placement rules", b)
	}
	if cfg, _ := pd.GetConfig(context.Background()); cfg.Replication.EnablePlacementRules {
		t.Fatal("the fake turned placement rules on before bootstrap; the test proves nothing")
	}

	pd.SetBootstrapped(true) // the first TiKV store registered
	if err := c.FinishCreate(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := pd.GetConfig(context.Background()); !cfg.Replication.EnablePlacementRules {
		t.Fatal("placement rules still off after PD bootstrapped")
	}

	tc.Status.TiFlash.Stores = map[string]v1alpha1.TiKVStore{
		"5": {ID: "5", PodName: "db-tiflash-0"}, "6": {ID: "6", PodName: "db-tiflash-1"},
	}
	pd.ResetCalls()
	if err := c.FinishCreate(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if calls := pd.Calls(); len(calls) != 0 {
		t.Errorf("every store registered, yet FinishCreate called PD: %v", calls)
	}
}

// TestFinishCreateAsksPDWhileAStoreIsMissing: a pod without a store (a
// scale-out, a store lost) makes FinishCreate check the rules, and it
// writes only when they are off.
func TestFinishCreateAsksPDWhileAStoreIsMissing(t *testing.T) {
	t.Parallel()
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "db")
	pd.SetConfig(pdapi.Config{Replication: pdapi.ReplicationConfig{EnablePlacementRules: true, MaxReplicas: 3}})
	c := New(&component.Env{PD: ctl})
	tc := hookTC("v8.5.0")
	tc.Status.TiFlash.Stores = map[string]v1alpha1.TiKVStore{"5": {ID: "5", PodName: "db-tiflash-0"}}
	if err := c.FinishCreate(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if reads, writes := len(pd.Calls()), len(pd.WriteCalls()); reads != 1 || writes != 0 {
		t.Errorf("FinishCreate made %d calls (%d writes), want one read and no write", reads, writes)
	}
}
