package simulator_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/simulator/client"
)

// TestClusterTimingsApplyToThatClusterOnly: timings set for default/basic
// slow down its pump's close, while a second cluster and the
// simulator-wide timings keep the fast defaults.
func TestClusterTimingsApplyToThatClusterOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addPods(simulator.ComponentPump, 1)
	other := simulator.ClusterKey{Namespace: "other", Name: "basic"}
	e.reg.Observe(other, simulator.ClusterObservation{HasPVCs: true, Pods: []simulator.PodObservation{
		{Name: "basic-pd-0", Component: simulator.ComponentPD, Running: true, Ready: true, PVCUID: "other-pd"},
		{Name: "basic-pump-0", Component: simulator.ComponentPump, Running: true, Ready: true, UID: "other-pump"}}})

	fast := simulator.FastTimings()
	slow := api.Duration(10 * time.Second)
	tm, err := e.admin.SetClusterTimings(e.ctx, "default", "basic", api.TimingsUpdate{PumpOfflineTime: &slow})
	if err != nil || tm.PumpOfflineTime != slow || tm.RegionMigrationTime != api.Duration(fast.RegionMigrationTime) {
		t.Fatalf("SetClusterTimings = %+v, %v", tm, err)
	}
	if g, err := e.admin.Timings(e.ctx); err != nil || g.PumpOfflineTime != api.Duration(fast.PumpOfflineTime) {
		t.Fatalf("simulator-wide timings = %+v, %v; want them unchanged", g, err)
	}
	for _, u := range []string{
		"http://basic-pump-0.basic-pump.default:8250/state/basic-pump-0:8250/close",
		"http://basic-pump-0.basic-pump.other:8250/state/basic-pump-0:8250/close",
	} {
		if code := e.put(t, u); code != http.StatusOK {
			t.Fatalf("close %s = %d", u, code)
		}
	}
	e.step(fast.PumpOfflineTime)
	if n := e.pumpNodes(t)[0]; n.State != "online" || n.ProcessState != "closing" {
		t.Errorf("default/basic after the simulator-wide offline time: %+v, want still closing", n)
	}
	st, err := e.admin.Cluster(e.ctx, "other", "basic")
	if err != nil || len(st.PumpNodes) != 1 || st.PumpNodes[0].State != "offline" {
		t.Errorf("other/basic after the simulator-wide offline time: %+v, %v; want offline", st, err)
	}
	e.step(time.Duration(slow) - fast.PumpOfflineTime)
	if n := e.pumpNodes(t)[0]; n.State != "offline" {
		t.Errorf("default/basic after its own offline time: %+v, want offline", n)
	}

	negative := api.Duration(-time.Second)
	var se *client.StatusError
	if _, err := e.admin.SetClusterTimings(e.ctx, "default", "basic", api.TimingsUpdate{LeaderDrainTime: &negative}); !asStatus(err, &se) || se.StatusCode != 400 {
		t.Errorf("negative duration = %v, want a 400", err)
	}
	if tm, err := e.admin.SetClusterTimings(e.ctx, "default", "basic", api.TimingsUpdate{}); err != nil || tm.PumpOfflineTime != slow ||
		tm.LeaderDrainTime != api.Duration(fast.LeaderDrainTime) {
		t.Errorf("after the refused update: %+v, %v; want the earlier timings kept", tm, err)
	}
}
