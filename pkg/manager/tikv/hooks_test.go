package tikv

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
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
	h := newTiKV(ctl, nil, record.NewFakeRecorder(10), now, component.FailoverConfig{})

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
	h := newTiKV(ctl, nil, record.NewFakeRecorder(10), now, component.FailoverConfig{})
	if err := h.EndUpgrade(context.Background(), tc); err == nil {
		t.Fatal("want an error so the sweep is retried")
	}
}

// TestScaleInWaitsForAYoungPodWithoutAStore holds the removal of a pod that
// is not Ready and has no store while it is younger than five resync
// periods in a bootstrapped cluster (it may be registering its store), and
// lets it go once older (spec §7.3).
func TestScaleInWaitsForAYoungPodWithoutAStore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		age  time.Duration
		wait bool
	}{{10 * time.Second, true}, {151 * time.Second, false}} {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		if err := indexer.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-3", Namespace: "ns",
			CreationTimestamp: metav1.NewTime(now.Add(-c.age))}}); err != nil {
			t.Fatal(err)
		}
		h := newTiKV(pdapi.NewFakeControl(), corelisters.NewPodLister(indexer), record.NewFakeRecorder(10), now, component.FailoverConfig{})
		tc := observedCluster()
		tc.Status.TiKV.Synced, tc.Status.TiKV.BootStrapped = true, true
		err := h.PreScaleIn(context.Background(), tc, 3)
		if _, waiting := flow.AsRequeue(err); waiting != c.wait {
			t.Errorf("pod %s old: PreScaleIn = %v; want a wait %v", c.age, err, c.wait)
		}
	}
}

// TestScaleInOfAPodWithoutAStore lets a pod PD reports no store of go only
// when it never became Ready: a Ready pod has probably registered a store
// PD has not shown yet (a StatefulSet scaled up by hand, then back).
func TestScaleInOfAPodWithoutAStore(t *testing.T) {
	t.Parallel()
	for _, ready := range []bool{false, true} {
		indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		if err := indexer.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-3", Namespace: "ns"},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}); err != nil {
			t.Fatal(err)
		}
		h := newTiKV(pdapi.NewFakeControl(), corelisters.NewPodLister(indexer), record.NewFakeRecorder(10), time.Now(), component.FailoverConfig{})
		tc := observedCluster()
		tc.Status.TiKV.Synced = true
		err := h.PreScaleIn(context.Background(), tc, 3)
		if _, waiting := flow.AsRequeue(err); waiting != ready {
			t.Errorf("pod Ready=%v: PreScaleIn = %v; want a wait only for a Ready pod", ready, err)
		}
	}
}
