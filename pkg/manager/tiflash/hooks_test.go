package tiflash

import (
	"context"
	"errors"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/tiflashapi"
)

func hookTC(version string) *v1alpha1.TidbCluster {
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace = "db", "ns"
	tc.Spec.Version = version
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 2}
	tc.Spec.TiFlash.BaseImage = "pingcap/tiflash"
	return tc
}

func writes(pd *pdapi.FakeClient, m pdapi.Method) int {
	n := 0
	for _, c := range pd.WriteCalls() {
		if c.Method == m {
			n++
		}
	}
	return n
}

// TestPreCreateEnablesPlacementRulesOnce: placement rules are turned on
// before the StatefulSet exists, and left alone once they are on.
func TestPreCreateEnablesPlacementRulesOnce(t *testing.T) {
	t.Parallel()
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "db")
	c := New(&component.Env{PD: ctl})
	tc := hookTC("v8.5.0")
	if err := c.PreCreate(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if n := writes(pd, pdapi.MethodEnablePlacementRules); n != 1 {
		t.Fatalf("EnablePlacementRules called %d times, want 1", n)
	}
	cfg, err := pd.GetConfig(context.Background())
	if err != nil || !cfg.Replication.EnablePlacementRules {
		t.Fatalf("placement rules not enabled in PD: %v %+v", err, cfg.Replication)
	}
	pd.ResetCalls()
	if err := c.PreCreate(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if n := len(pd.WriteCalls()); n != 0 {
		t.Errorf("PD written %d times although placement rules were on", n)
	}
}

func TestPreCreateErrorsWhilePDCannotAnswer(t *testing.T) {
	t.Parallel()
	ctl := pdapi.NewFakeControl()
	ctl.ClusterClient("ns", "db").SetError(pdapi.MethodGetConfig, errors.New("connection refused"))
	if err := New(&component.Env{PD: ctl}).PreCreate(context.Background(), hookTC("v8.5.0")); err == nil {
		t.Fatal("want an error so the creation is retried")
	}
}

// TestPostUpgradePodWaitsForRunning: the rollout goes on only once the
// restarted pod's store reports Running; TiFlash before v5.1.2 is not asked.
func TestPostUpgradePodWaitsForRunning(t *testing.T) {
	t.Parallel()
	tf := tiflashapi.NewFakeClient()
	c := NewWithClient(&component.Env{PD: pdapi.NewFakeControl()}, tf)
	tc := hookTC("v8.5.0")
	tf.SetStoreStatus("ns", "db-tiflash-1", tiflashapi.StoreStatusIdle)
	err := c.PostUpgradePod(context.Background(), tc, 1)
	if re, waiting := flow.AsRequeue(err); !waiting || re.Reason == "" {
		t.Fatalf("PostUpgradePod = %v, want a wait while the store is Idle", err)
	}
	tf.SetStoreStatus("ns", "db-tiflash-1", tiflashapi.StoreStatusRunning)
	if err := c.PostUpgradePod(context.Background(), tc, 1); err != nil {
		t.Fatalf("PostUpgradePod = %v once Running", err)
	}
	tf.SetError("ns", "db-tiflash-1", errors.New("connection refused"))
	if _, waiting := flow.AsRequeue(c.PostUpgradePod(context.Background(), tc, 1)); !waiting {
		t.Error("an unreachable pod does not hold the rollout")
	}
	old := hookTC("v5.0.6")
	before := len(tf.Calls())
	if err := c.PostUpgradePod(context.Background(), old, 1); err != nil {
		t.Fatalf("v5.0.6: %v", err)
	}
	if len(tf.Calls()) != before {
		t.Error("a TiFlash older than v5.1.2 was asked for its store status")
	}
}

func TestServesStoreStatus(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]bool{
		"v5.1.2": true, "v5.1.1": false, "v5.0.6": false, "v4.0.16": false, "v6.5.0": true,
		"v8.5.0-pre": true, "latest": true, "nightly": true,
	} {
		if got := servesStoreStatus(hookTC(version)); got != want {
			t.Errorf("servesStoreStatus(%s) = %v, want %v", version, got, want)
		}
	}
}
