package store

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var testKind = Kind{
	Component: "tiflash", TiFlash: true,
	Status:      func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiFlash },
	Spec:        func(tc *v1alpha1.TidbCluster) Spec { return Spec{Replicas: tc.Spec.TiFlash.Replicas} },
	NotUpReason: "TiFlashStoreNotUp", Label: "TiFlash",
}

// TestScaleInDeletesTheLiveStoreOfAReusedOrdinal: an ordinal scaled in
// before (its old store Tombstone) and scaled out again has a new live
// store; scaling it in again must take that store through Tombstone, not
// release the pod because of the old one.
func TestScaleInDeletesTheLiveStoreOfAReusedOrdinal(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace = "db", "ns"
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: 2}
	tc.Status.TiFlash = v1alpha1.TiKVStatus{
		Synced: true,
		Stores: map[string]v1alpha1.TiKVStore{
			"2": {ID: "2", PodName: "db-tiflash-0", State: pdapi.StoreStateNameUp},
			"3": {ID: "3", PodName: "db-tiflash-1", State: pdapi.StoreStateNameUp},
			"5": {ID: "5", PodName: "db-tiflash-2", State: pdapi.StoreStateNameUp},
		},
		TombstoneStores: map[string]v1alpha1.TiKVStore{"4": {ID: "4", PodName: "db-tiflash-2", State: pdapi.StoreStateNameTombstone}},
	}
	tc.Status.TiKV = v1alpha1.TiKVStatus{Synced: true, Stores: upStores("db-tikv-0", "db-tikv-1", "db-tikv-2")}
	ctl := pdapi.NewFakeControl()
	l := New(testKind, &component.Env{PD: ctl, Recorder: record.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	err := l.PreScaleIn(context.Background(), tc, 2)
	if _, waiting := flow.AsRequeue(err); !waiting {
		t.Fatalf("PreScaleIn = %v, want a wait for store 5 to become Tombstone", err)
	}
	deleted := false
	for _, c := range ctl.ClusterClient("ns", "db").WriteCalls() {
		if c.Method == pdapi.MethodDeleteStore {
			deleted = true
		}
	}
	if !deleted {
		t.Error("the live store 5 of the reused ordinal was not deleted in PD")
	}
}

func upStores(pods ...string) map[string]v1alpha1.TiKVStore {
	out := map[string]v1alpha1.TiKVStore{}
	for i, p := range pods {
		id := strconv.Itoa(10 + i)
		out[id] = v1alpha1.TiKVStore{ID: id, PodName: p, State: pdapi.StoreStateNameUp}
	}
	return out
}

// TestTiFlashScaleInRefusals: a TiFlash store is not deleted when fewer
// TiFlash stores would remain than a table's TiFlash replicas, nor when
// fewer stores of either engine would remain than PD's max-replicas (PD's
// own refusal); each refusal is a FailedScaleIn Warning and a wait.
func TestTiFlashScaleInRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		tikv       int
		tiflash    int
		maxReplica uint64
		tableCount int
		want       string // "" = the store is deleted
	}{
		{"enough of both", 3, 3, 3, 2, ""},
		{"enough without a table rule", 1, 3, 3, 0, ""},
		{"a table needs 3 TiFlash replicas", 3, 3, 3, 3, "a table has 3 TiFlash replicas"},
		{"PD needs 3 stores in all", 1, 2, 3, 0, "PD keeps 3 replicas"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{}
			tc.Name, tc.Namespace = "db", "ns"
			tc.Spec.PD = &v1alpha1.PDSpec{}
			tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: int32(c.tiflash - 1)} //nolint:gosec // small
			var kv, tf []string
			for i := 0; i < c.tikv; i++ {
				kv = append(kv, "db-tikv-"+strconv.Itoa(i))
			}
			for i := 0; i < c.tiflash; i++ {
				tf = append(tf, "db-tiflash-"+strconv.Itoa(i))
			}
			tc.Status.TiKV = v1alpha1.TiKVStatus{Synced: true, Stores: upStores(kv...)}
			tc.Status.TiFlash = v1alpha1.TiKVStatus{Synced: true, Stores: map[string]v1alpha1.TiKVStore{}}
			for id, s := range upStores(tf...) {
				tc.Status.TiFlash.Stores["1"+id] = v1alpha1.TiKVStore{ID: "1" + id, PodName: s.PodName, State: s.State}
			}
			ctl := pdapi.NewFakeControl()
			pd := ctl.ClusterClient("ns", "db")
			cfg := pdapi.Config{}
			cfg.Replication.MaxReplicas = c.maxReplica
			cfg.Replication.EnablePlacementRules = true
			pd.SetConfig(cfg)
			if c.tableCount > 0 {
				pd.SetPlacementRules(pdapi.PlacementRule{GroupID: "tiflash", ID: "table-45-r", Role: "learner", Count: c.tableCount})
			}
			rec := record.NewFakeRecorder(10)
			l := New(testKind, &component.Env{PD: ctl, Recorder: rec, Clock: clocktesting.NewFakeClock(time.Now())})
			err := l.PreScaleIn(context.Background(), tc, int32(c.tiflash-1)) //nolint:gosec // small
			if _, waiting := flow.AsRequeue(err); !waiting {
				t.Fatalf("PreScaleIn = %v, want a wait", err)
			}
			deleted := false
			for _, call := range pd.WriteCalls() {
				deleted = deleted || call.Method == pdapi.MethodDeleteStore
			}
			if c.want == "" {
				if !deleted {
					t.Error("the store was not deleted although enough stores remain")
				}
				return
			}
			if deleted {
				t.Error("the store was deleted although PD could not keep its copies")
			}
			select {
			case e := <-rec.Events:
				if !strings.Contains(e, "FailedScaleIn") || !strings.Contains(e, c.want) {
					t.Errorf("event %q, want FailedScaleIn naming %q", e, c.want)
				}
			default:
				t.Error("no FailedScaleIn event")
			}
		})
	}
}

// TestParallelScaleInCountsTheStoresItDeleted: with scaleInParallelism, two
// stores are removed in one sync; the second removal must count the first
// store as gone (PD reports it Offline) — with 4 Up TiKV stores and PD's 3
// replicas, only one of the two may leave.
func TestParallelScaleInCountsTheStoresItDeleted(t *testing.T) {
	t.Parallel()
	kind := Kind{Component: "tikv", Label: "TiKV", NotUpReason: "TiKVStoreNotUp",
		Status: func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus { return &tc.Status.TiKV },
		Spec:   func(tc *v1alpha1.TidbCluster) Spec { return Spec{Replicas: tc.Spec.TiKV.Replicas} }}
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace = "db", "ns"
	tc.Spec.PD = &v1alpha1.PDSpec{}
	tc.Spec.TiKV = &v1alpha1.TiKVSpec{Replicas: 2}
	tc.Status.TiKV = v1alpha1.TiKVStatus{Synced: true, Stores: upStores("db-tikv-0", "db-tikv-1", "db-tikv-2", "db-tikv-3")}
	ctl := pdapi.NewFakeControl() // max-replicas 3
	rec := record.NewFakeRecorder(10)
	l := New(kind, &component.Env{PD: ctl, Recorder: rec, Clock: clocktesting.NewFakeClock(time.Now())})
	for _, ordinal := range []int32{3, 2} {
		if _, waiting := flow.AsRequeue(l.PreScaleIn(context.Background(), tc, ordinal)); !waiting {
			t.Fatalf("PreScaleIn(%d) did not wait", ordinal)
		}
	}
	deleted := 0
	for _, call := range ctl.ClusterClient("ns", "db").WriteCalls() {
		if call.Method == pdapi.MethodDeleteStore {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("%d stores deleted in one sync, want 1 (3 Up stores must remain)", deleted)
	}
	if up := l.UpStores(tc); up != 3 {
		t.Errorf("Up stores after the deletion = %d, want 3 (the deleted one Offline)", up)
	}
}
