package dmapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/dmapi"
)

func TestFakeClientAnswersLikeDMMaster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ctl := dmapi.NewFakeControl()
	f := ctl.Cluster("ns", "basic")
	f.SetMasters(dmapi.MasterMember{Name: "basic-dm-master-0", Alive: true}, dmapi.MasterMember{Name: "basic-dm-master-1", Alive: true})
	f.SetWorkers(dmapi.WorkerMember{Name: "w0", Stage: dmapi.StageFree}, dmapi.WorkerMember{Name: "w1", Stage: dmapi.StageOffline})
	f.SetLeader("basic-dm-master-1")
	c := ctl.GetClient("ns", "basic", dmapi.Options{TLSEnabled: true})

	if err := c.EvictLeader(ctx, "basic-dm-master-1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.GetLeader(ctx); l.Name != "basic-dm-master-0" {
		t.Errorf("leader after eviction = %q", l.Name)
	}
	if err := c.DeleteMaster(ctx, "basic-dm-master-1"); err != nil {
		t.Fatal(err)
	}
	var refused *dmapi.RefusedError
	if err := c.EvictLeader(ctx, "basic-dm-master-0"); !errors.As(err, &refused) {
		t.Errorf("evicting the only master: %v", err)
	}
	if m, _ := c.GetMasters(ctx); len(m) != 1 {
		t.Errorf("masters after delete = %+v", m)
	}
	if err := c.DeleteWorker(ctx, "w0"); !errors.As(err, &refused) {
		t.Errorf("deleting a free worker: %v", err)
	}
	if err := c.DeleteWorker(ctx, "w1"); err != nil {
		t.Errorf("deleting an offline worker: %v", err)
	}
	if w, _ := c.GetWorkers(ctx); len(w) != 1 || w[0].Name != "w0" {
		t.Errorf("workers = %+v", w)
	}
	errDown := errors.New("down")
	f.SetError(dmapi.MethodGetMasters, errDown)
	if _, err := c.GetMasters(ctx); !errors.Is(err, errDown) {
		t.Errorf("injected error: %v", err)
	}
	if got := f.CallsOf(dmapi.MethodEvictLeader); len(got) != 2 || got[1].Name != "basic-dm-master-0" {
		t.Errorf("evictions = %+v", got)
	}
	if len(f.CallsOf(dmapi.MethodGetMasters)) != 2 {
		t.Error("a failed call was not recorded")
	}
}
