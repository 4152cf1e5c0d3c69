package tikv

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestPreUpgradePodAddsALostEvictLeaderSchedulerAgain: the pod about to
// restart began its eviction, then PD lost the scheduler while the store
// still leads regions. The restart keeps waiting and the scheduler is added
// again, with an event; while PD keeps it, nothing more is written.
func TestPreUpgradePodAddsALostEvictLeaderSchedulerAgain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	tc := storesTC(map[string]string{"basic-tikv-0": "Up"}, now)
	tc.Spec.TiKV.Replicas = 3
	s := tc.Status.TiKV.Stores["1"]
	s.LeaderCount = 40
	tc.Status.TiKV.Stores["1"] = s

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	began := now.Add(-time.Minute).Format(time.RFC3339)
	if err := indexer.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-0", Namespace: "ns",
		Annotations: map[string]string{label.AnnEvictLeaderBeginTime: began}}}); err != nil {
		t.Fatal(err)
	}
	ctl := pdapi.NewFakeControl()
	pd := ctl.ClusterClient("ns", "basic")
	rec := record.NewFakeRecorder(10)
	h := newTiKV(ctl, corelisters.NewPodLister(indexer), rec, now, component.FailoverConfig{})

	err := h.PreUpgradePod(context.Background(), tc, 0)
	if _, waiting := flow.AsRequeue(err); !waiting {
		t.Fatalf("PreUpgradePod = %v, want a wait while the store leads 40 regions", err)
	}
	if evicting, _ := pd.GetEvictLeaderSchedulers(context.Background()); !slices.Contains(evicting, 1) {
		t.Fatalf("the lost scheduler of store 1 was not added again; PD evicts %v", evicting)
	}
	select {
	case e := <-rec.Events:
		if !strings.Contains(e, ReasonEvictLeaderBegin) || !strings.Contains(e, "again") {
			t.Errorf("event %q does not tell that the scheduler was added again", e)
		}
	default:
		t.Error("no event for the re-added scheduler")
	}

	pd.ResetCalls()
	if _, waiting := flow.AsRequeue(h.PreUpgradePod(context.Background(), tc, 0)); !waiting {
		t.Fatal("want the restart to keep waiting")
	}
	if w := pd.WriteCalls(); len(w) != 0 {
		t.Errorf("PD keeps the scheduler, yet PreUpgradePod wrote %v", w)
	}
}
