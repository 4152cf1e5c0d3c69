package dm

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
)

// TestSuspendDeletesWorkerBeforeMaster: with suspendStatefulSet, dm-worker's
// StatefulSet goes first; dm-master's stays while the worker's still exists.
func TestSuspendDeletesWorkerBeforeMaster(t *testing.T) {
	t.Parallel()
	f := newSyncFixture()
	dc := parseDM(t, basicDM)
	dmc := f.ctl.Cluster("ns", "basic")
	dmc.SetMasters(dmapi.MasterMember{Name: "basic-dm-master-0", Alive: true})
	dmc.SetLeader("basic-dm-master-0")
	_ = f.sync(dc) // dm-master created
	f.seed(t)
	_ = f.sync(dc) // dm-worker created
	f.seed(t)
	dmc.SetWorkers(dmapi.WorkerMember{Name: "basic-dm-worker-0", Stage: dmapi.StageFree})
	for i, err := range f.sync(dc) {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	dc.Spec.SuspendAction = &v1alpha1.SuspendAction{SuspendStatefulSet: true}
	f.kube.ClearActions()
	_ = f.sync(dc)
	var deleted []string
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "statefulsets" {
			deleted = append(deleted, a.(interface{ GetName() string }).GetName())
		}
	}
	if len(deleted) != 1 || deleted[0] != "basic-dm-worker" {
		t.Fatalf("deleted StatefulSets = %v", deleted)
	}
	if dc.Status.Worker.Phase != v1alpha1.SuspendPhase || dc.Status.Master.Phase == v1alpha1.SuspendPhase {
		t.Fatalf("phases: master %s worker %s", dc.Status.Master.Phase, dc.Status.Worker.Phase)
	}
}
