package tikv

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func TestEndUpgradeRemovesOnlyThisClustersSchedulers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	tc := storesTC(map[string]string{"basic-tikv-0": "Up", "basic-tikv-1": "Up"}, now) // stores 1 and 2
	tc.Status.TiKV.TombstoneStores = map[string]v1alpha1.TiKVStore{"7": {ID: "7"}}
	tc.Status.TiKV.FailureStores = map[string]v1alpha1.TiKVFailureStore{"8": {StoreID: "8"}}
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "basic")
	pd.SetEvictLeaderSchedulers(1, 2, 7, 8, 99) // 99: a store this cluster does not know
	h := NewHooks(component.FailoverConfig{}, ctl, nil, nil, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now))

	if err := h.EndUpgrade(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	left, err := pd.GetEvictLeaderSchedulers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []uint64{99}) {
		t.Errorf("schedulers left %v, want only the foreign store 99", left)
	}

	pd.ResetCalls()
	if err := h.EndUpgrade(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if w := pd.WriteCalls(); len(w) != 0 {
		t.Errorf("a second sweep wrote to PD: %v", w)
	}
}

func TestEndUpgradeErrorsWhenPDCannotList(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	tc := storesTC(map[string]string{"basic-tikv-0": "Up"}, now)
	ctl := pdapi.NewFakeControl()
	ctl.ClusterClient("ns", "basic").SetError(pdapi.MethodGetEvictLeaderSchedulers, errors.New("connection refused"))
	h := NewHooks(component.FailoverConfig{}, ctl, nil, nil, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now))
	if err := h.EndUpgrade(context.Background(), tc); err == nil {
		t.Fatal("want an error so the sweep is retried")
	}
}
