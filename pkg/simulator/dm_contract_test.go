package simulator_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/podhttp/podhttptest"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// dmEnv is a simulator serving DMCluster default/basic (and TidbCluster default/basic, which must not
// mix with it) to the operator's dm-master client through its proxy.
type dmEnv struct {
	ctx   context.Context
	reg   *simulator.Registry
	pods  []simulator.PodObservation
	dm    dmapi.Client
	admin *client.Client
}

func newDMEnv(t *testing.T) *dmEnv {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2024, 5, 29, 0, 0, 0, 0, time.UTC))
	reg, err := simulator.NewRegistry(simulator.DefaultOptions(), clk, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(simulator.NewServer(reg, clk, logr.Discard()))
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	transport := pdapi.NewTransport(nil)
	transport.Proxy = http.ProxyURL(proxyURL)
	ctl := dmapi.NewControlWithHTTPClients(podhttptest.Plain(&http.Client{Transport: transport}), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	reg.Observe(simulator.ClusterKey{Namespace: "default", Name: "basic"}, simulator.ClusterObservation{HasPVCs: true,
		Pods: []simulator.PodObservation{{Name: "basic-pd-0", Component: simulator.ComponentPD, Running: true, Ready: true, PVCUID: "u"}}})
	return &dmEnv{ctx: ctx, reg: reg, dm: ctl.GetClient("default", "basic", dmapi.Options{}), admin: client.New(srv.URL, nil)}
}

func (e *dmEnv) set(pods ...simulator.PodObservation) {
	e.pods = pods
	e.reg.ObserveDM(simulator.ClusterKey{Namespace: "default", Name: "basic"}, simulator.DMObservation{Pods: pods, HasPVCs: true})
}

func dmPod(name string, comp simulator.Component, running bool) simulator.PodObservation {
	return simulator.PodObservation{Name: name, Component: comp, Running: running, Ready: running, UID: "uid-" + name}
}

func TestDMClientContract(t *testing.T) {
	t.Parallel()
	e := newDMEnv(t)
	m0, m1 := dmPod("basic-dm-master-0", simulator.ComponentDMMaster, true), dmPod("basic-dm-master-1", simulator.ComponentDMMaster, true)
	w0 := dmPod("basic-dm-worker-0", simulator.ComponentDMWorker, true)
	e.set(m0, m1, w0)

	masters, err := e.dm.GetMasters(e.ctx)
	if err != nil || len(masters) != 2 || masters[0].Name != "basic-dm-master-0" || !masters[0].Alive || masters[0].MemberID == "" ||
		masters[1].PeerURLs[0] != "http://basic-dm-master-1.basic-dm-master-peer:8291" || len(masters[1].ClientURLs) != 1 {
		t.Fatalf("GetMasters = %+v, %v", masters, err)
	}
	workers, err := e.dm.GetWorkers(e.ctx)
	if err != nil || len(workers) != 1 || workers[0].Stage != dmapi.StageFree || workers[0].Addr != "basic-dm-worker-0.basic-dm-worker-peer:8262" {
		t.Fatalf("GetWorkers = %+v, %v", workers, err)
	}
	if l, err := e.dm.GetLeader(e.ctx); err != nil || l.Name != "basic-dm-master-0" {
		t.Fatalf("GetLeader = %+v, %v", l, err)
	}
	if err := e.dm.EvictLeader(e.ctx, "basic-dm-master-0"); err != nil {
		t.Fatal(err)
	}
	if l, _ := e.dm.GetLeader(e.ctx); l.Name != "basic-dm-master-1" {
		t.Errorf("leader after eviction = %q", l.Name)
	}
	var refused *dmapi.RefusedError
	if err := e.dm.EvictLeader(e.ctx, "basic-dm-master-1"); !errors.As(err, &refused) {
		t.Errorf("evicting the last candidate: %v", err)
	}
	if err := e.dm.DeleteWorker(e.ctx, "basic-dm-worker-0"); !errors.As(err, &refused) {
		t.Errorf("deleting an online worker: %v", err)
	}
	e.set(m0, m1)
	if err := e.dm.DeleteWorker(e.ctx, "basic-dm-worker-0"); err != nil {
		t.Errorf("deleting an offline worker: %v", err)
	}
	if err := e.dm.DeleteMaster(e.ctx, "basic-dm-master-0"); err != nil {
		t.Fatal(err)
	}
	if masters, _ := e.dm.GetMasters(e.ctx); len(masters) != 1 {
		t.Errorf("masters after delete = %+v", masters)
	}

	st, err := e.admin.DMCluster(e.ctx, "default", "basic")
	if err != nil || len(st.Evictions) != 2 || len(st.Deletes) != 3 || st.PlainRequests == 0 || st.Leader != "basic-dm-master-1" {
		t.Fatalf("DM state = %+v, %v", st, err)
	}
	if tc, err := e.admin.Cluster(e.ctx, "default", "basic"); err != nil || len(tc.Members) != 1 {
		t.Errorf("the TidbCluster of the same name = %+v, %v", tc, err)
	}
}

func TestDMAdminClient(t *testing.T) {
	t.Parallel()
	e := newDMEnv(t)
	e.set(dmPod("basic-dm-master-0", simulator.ComponentDMMaster, true))
	f, err := e.admin.AddDMFault(e.ctx, "default", "basic", api.Fault{Kind: api.FaultError, Status: 500, Body: "boom", Component: "dm-master"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.dm.GetMasters(e.ctx); err == nil {
		t.Error("a faulted dm-master answered")
	}
	if err := e.admin.DeleteDMFault(e.ctx, "default", "basic", f.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.admin.DeleteDMFault(e.ctx, "default", "basic", f.ID); !client.IsNotFound(err) {
		t.Errorf("deleting a fault twice: %v", err)
	}
	if err := e.admin.SetDMMasterUnhealthy(e.ctx, "default", "basic", "basic-dm-master-0", true); err != nil {
		t.Fatal(err)
	}
	if l, err := e.dm.GetLeader(e.ctx); err != nil || l.Name != "" {
		t.Errorf("leader with the only master unhealthy = %+v, %v", l, err)
	}
	if masters, err := e.dm.GetMasters(e.ctx); err != nil || masters[0].Alive {
		t.Errorf("masters = %+v, %v", masters, err)
	}
	if err := e.admin.ClearDMFaults(e.ctx, "default", "basic"); err != nil {
		t.Error(err)
	}
	if sums, err := e.admin.DMClusters(e.ctx); err != nil || len(sums) != 1 || sums[0].Masters != 1 {
		t.Errorf("DMClusters = %+v, %v", sums, err)
	}
}
