package pdapi_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func fakeStore(id uint64, state pdapi.StoreState, name string) *pdapi.StoreInfo {
	return &pdapi.StoreInfo{Store: &pdapi.MetaStore{ID: id, State: state, StateName: name}}
}

func TestFakeClientReadsAndWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	f.SetMembers("pd-0", &pdapi.Member{Name: "pd-0", MemberID: 10}, &pdapi.Member{Name: "pd-1", MemberID: 11})
	f.SetHealth(pdapi.HealthInfo{{Name: "pd-0", MemberID: 10, Health: true}, {Name: "pd-1", MemberID: 11, Health: true}})
	f.SetStores(fakeStore(1, pdapi.StoreStateUp, "Up"), fakeStore(2, pdapi.StoreStateUp, "Up"),
		fakeStore(3, pdapi.StoreStateTombstone, "Tombstone"))

	check(t, "TransferPDLeader", f.TransferPDLeader(ctx, "pd-1"))
	leader, err := f.GetLeader(ctx)
	check(t, "GetLeader", err)
	if leader.Name != "pd-1" {
		t.Errorf("leader after transfer = %q", leader.Name)
	}
	check(t, "DeleteMemberByID", f.DeleteMemberByID(ctx, 11))
	if _, err := f.GetLeader(ctx); !pdapi.IsStatus(err, 503) {
		t.Errorf("GetLeader after deleting the leader: err = %v, want 503", err)
	}
	members, _ := f.GetMembers(ctx)
	health, _ := f.GetHealth(ctx)
	if len(members.Members) != 1 || len(health) != 1 || members.Leader != nil {
		t.Errorf("after DeleteMemberByID: members %+v, health %+v", members, health)
	}

	check(t, "DeleteStore", f.DeleteStore(ctx, 2))
	check(t, "SetStoreLabels", f.SetStoreLabels(ctx, 1, map[string]string{"zone": "z1"}))
	stores, _ := f.GetStores(ctx)
	tombstones, _ := f.GetTombstoneStores(ctx)
	gotStores := []string{}
	for _, s := range append(stores.Stores, tombstones.Stores...) {
		gotStores = append(gotStores, itoa(s.Store.ID)+" "+s.Store.StateName+" "+labelsOf(s))
	}
	if diff := cmp.Diff([]string{"1 Up zone=z1", "2 Offline ", "3 Tombstone "}, gotStores); diff != "" {
		t.Errorf("stores (-want +got):\n%s", diff)
	}
	if _, err := f.GetStore(ctx, 99); !errors.Is(err, pdapi.ErrNotFound) {
		t.Errorf("GetStore(99): err = %v, want ErrNotFound", err)
	}

	check(t, "BeginEvictLeader", f.BeginEvictLeader(ctx, 2))
	check(t, "BeginEvictLeader", f.BeginEvictLeader(ctx, 1))
	check(t, "EndEvictLeader", f.EndEvictLeader(ctx, 2))
	ids, _ := f.GetEvictLeaderSchedulers(ctx)
	if diff := cmp.Diff([]uint64{1}, ids); diff != "" {
		t.Errorf("evict-leader stores (-want +got):\n%s", diff)
	}

	check(t, "UpdateReplicationConfig", f.UpdateReplicationConfig(ctx, pdapi.ReplicationConfigUpdate{EnablePlacementRules: ptr(true)}))
	cfg, _ := f.GetConfig(ctx)
	if !cfg.Replication.EnablePlacementRules || cfg.Replication.MaxReplicas != 3 {
		t.Errorf("replication after update = %+v", cfg.Replication)
	}
}

func labelsOf(s *pdapi.StoreInfo) string {
	out := ""
	for _, l := range s.Store.Labels {
		out += l.Key + "=" + l.Value
	}
	return out
}

func TestFakeClientRecordsCallsAndInjectsErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	errBoom := errors.New("boom")
	f.SetError(pdapi.MethodGetStores, errBoom)
	if _, err := f.GetStores(ctx); !errors.Is(err, errBoom) {
		t.Errorf("GetStores: err = %v, want injected", err)
	}
	f.SetError(pdapi.MethodGetStores, nil)
	if _, err := f.GetStores(ctx); err != nil {
		t.Errorf("GetStores after clearing: %v", err)
	}

	deletes := 0
	f.SetHook(func(c pdapi.Call) error {
		if c.Method == pdapi.MethodDeleteStore {
			deletes++
			if deletes == 2 {
				return errBoom
			}
		}
		return nil
	})
	check(t, "first DeleteStore", f.DeleteStore(ctx, 1))
	if err := f.DeleteStore(ctx, 2); !errors.Is(err, errBoom) {
		t.Errorf("second DeleteStore: err = %v, want hook error", err)
	}
	want := []pdapi.Call{
		{Method: pdapi.MethodGetStores},
		{Method: pdapi.MethodGetStores},
		{Method: pdapi.MethodDeleteStore, Args: []any{uint64(1)}},
		{Method: pdapi.MethodDeleteStore, Args: []any{uint64(2)}},
	}
	if diff := cmp.Diff(want, f.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:], f.WriteCalls()); diff != "" {
		t.Errorf("write calls (-want +got):\n%s", diff)
	}
	f.ResetCalls()
	if len(f.Calls()) != 0 {
		t.Error("ResetCalls left calls")
	}
}

func TestFakeClientNotBootstrapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	f.SetBootstrapped(false)
	if _, err := f.GetStores(ctx); !errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		t.Errorf("GetStores before bootstrap: err = %v", err)
	}
	if err := f.BeginEvictLeader(ctx, 1); !errors.Is(err, pdapi.ErrTiKVNotBootstrapped) {
		t.Errorf("BeginEvictLeader before bootstrap: err = %v", err)
	}
	if _, err := f.GetHealth(ctx); err != nil {
		t.Errorf("GetHealth needs no bootstrap: %v", err)
	}
	f.SetBootstrapped(true)
	if _, err := f.GetStores(ctx); err != nil {
		t.Errorf("GetStores after bootstrap: %v", err)
	}
}

func TestFakeClientReturnsCopies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	seed := fakeStore(1, pdapi.StoreStateUp, "Up")
	f.SetStores(seed)
	seed.Store.StateName = "Changed by the test"
	got, _ := f.GetStore(ctx, 1)
	got.Store.StateName = "Changed by the caller"
	again, _ := f.GetStore(ctx, 1)
	if again.Store.StateName != "Up" || again.Status == nil {
		t.Errorf("fake state leaked through a pointer: %+v %+v", again.Store, again.Status)
	}
}

func TestFakeClientConcurrentUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := pdapi.NewFakeClient()
	f.SetStores(fakeStore(1, pdapi.StoreStateUp, "Up"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = f.GetStores(ctx)
			_ = f.BeginEvictLeader(ctx, uint64(i))
			_ = f.SetStoreLabels(ctx, 1, map[string]string{"k": "v"})
		}()
	}
	wg.Wait()
	if n := len(f.Calls()); n != 24 {
		t.Errorf("recorded %d calls, want 24", n)
	}
}

func TestFakeControl(t *testing.T) {
	t.Parallel()
	control := pdapi.NewFakeControl()
	cluster := control.ClusterClient("ns", "basic")
	cluster.SetCluster(pdapi.Cluster{ID: 42})

	got := control.GetPDClient("ns", "basic", pdapi.ClusterOptions{TLSEnabled: true, ClusterDomain: "cluster.local"})
	if got != pdapi.Client(cluster) {
		t.Error("GetPDClient must return the seeded cluster client whatever the TLS and domain")
	}
	member := control.GetPDClient("ns", "basic", pdapi.ClusterOptions{Member: "basic-pd-0"})
	if member == pdapi.Client(cluster) || member != pdapi.Client(control.MemberClient("ns", "basic", "basic-pd-0")) {
		t.Error("a member client must be distinct from the cluster client and stable")
	}
	if control.GetPDClient("ns2", "basic", pdapi.ClusterOptions{}) == pdapi.Client(cluster) {
		t.Error("another namespace must get another client")
	}
	if n := len(control.Requests()); n != 3 {
		t.Errorf("recorded %d GetPDClient calls, want 3", n)
	}
}
