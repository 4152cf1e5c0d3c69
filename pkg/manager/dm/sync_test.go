package dm

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// syncFixture runs Members over a fake API server whose objects the test
// copies into the informer caches, with a fake dm-master.
type syncFixture struct {
	kube    *fake.Clientset
	inf     informers.SharedInformerFactory
	ctl     *dmapi.FakeControl
	members []Member
}

func newSyncFixture() *syncFixture {
	kube := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(kube, 0)
	rec := record.NewFakeRecorder(100)
	core, apps := inf.Core().V1(), inf.Apps().V1()
	env := &component.Env{
		Writer: apply.NewApplier(kube, rec, apply.Caches{Services: core.Services().Lister(),
			ConfigMaps: core.ConfigMaps().Lister(), StatefulSets: apps.StatefulSets().Lister()}),
		Kube: kube, StatefulSets: apps.StatefulSets().Lister(), Pods: core.Pods().Lister(),
		ConfigMaps: core.ConfigMaps().Lister(), PVCs: core.PersistentVolumeClaims().Lister(),
		Recorder: rec, Clock: clocktesting.NewFakePassiveClock(t0),
	}
	f := &syncFixture{kube: kube, inf: inf, ctl: dmapi.NewFakeControl()}
	f.members = Members(env, f.ctl)
	return f
}

// seed copies the fake API's objects into the caches; StatefulSets get the
// status of all their pods Ready on one revision.
func (f *syncFixture) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	svcs, _ := f.kube.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		must(t, f.inf.Core().V1().Services().Informer().GetIndexer().Update(&svcs.Items[i]))
	}
	cms, _ := f.kube.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
	for i := range cms.Items {
		must(t, f.inf.Core().V1().ConfigMaps().Informer().GetIndexer().Update(&cms.Items[i]))
	}
	sets, _ := f.kube.AppsV1().StatefulSets("ns").List(ctx, metav1.ListOptions{})
	for i := range sets.Items {
		sts := &sets.Items[i]
		n := *sts.Spec.Replicas
		sts.Status = appsv1.StatefulSetStatus{Replicas: n, ReadyReplicas: n, CurrentRevision: "r1", UpdateRevision: "r1"}
		must(t, f.inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *syncFixture) sync(dc *v1alpha1.DMCluster) []error {
	var errs []error
	for _, m := range f.members {
		errs = append(errs, m.Sync(context.Background(), dc))
	}
	return errs
}

func requeueReason(err error) string {
	re, ok := flow.AsRequeue(err)
	if !ok {
		return ""
	}
	return re.Reason
}

// TestSyncCreatesMasterThenWorker: the first sync creates dm-master and
// waits; dm-worker waits for dm-master; once dm-master has its member, the
// worker's objects are created; synced again with both converged, nothing
// is written.
func TestSyncCreatesMasterThenWorker(t *testing.T) {
	t.Parallel()
	f := newSyncFixture()
	dc := parseDM(t, basicDM)
	dc.UID = "dc-uid"
	errs := f.sync(dc)
	if r := requeueReason(errs[0]); !strings.Contains(r, "created StatefulSet basic-dm-master") {
		t.Fatalf("dm-master: %v", errs[0])
	}
	if r := requeueReason(errs[1]); !strings.Contains(r, "waiting for dm-master cluster running") {
		t.Fatalf("dm-worker: %v", errs[1])
	}
	if _, err := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-dm-worker", metav1.GetOptions{}); err == nil {
		t.Fatal("dm-worker StatefulSet created before dm-master is available")
	}

	f.seed(t)
	dmc := f.ctl.Cluster("ns", "basic")
	dmc.SetMasters(dmapi.MasterMember{Name: "basic-dm-master-0", MemberID: "1", Alive: true,
		ClientURLs: []string{"http://basic-dm-master-0.basic-dm-master-peer:8261"}})
	dmc.SetLeader("basic-dm-master-0")
	errs = f.sync(dc)
	if errs[0] != nil {
		t.Fatalf("dm-master: %v", errs[0])
	}
	st := dc.Status.Master
	if !st.Synced || st.Leader.Name != "basic-dm-master-0" || !st.Members["basic-dm-master-0"].Health {
		t.Fatalf("master status = %+v", st)
	}
	if r := requeueReason(errs[1]); !strings.Contains(r, "created StatefulSet basic-dm-worker") {
		t.Fatalf("dm-worker: %v", errs[1])
	}

	f.seed(t)
	dmc.SetWorkers(dmapi.WorkerMember{Name: "basic-dm-worker-0", Addr: "basic-dm-worker-0.basic-dm-worker-peer:8262", Stage: dmapi.StageFree})
	f.kube.ClearActions()
	for i, err := range f.sync(dc) {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	for _, a := range f.kube.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("converged sync wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if !dc.Status.Worker.Synced || dc.Status.Worker.Members["basic-dm-worker-0"].Stage != dmapi.StageFree {
		t.Fatalf("worker status = %+v", dc.Status.Worker)
	}
}

// TestPausedSyncsMasterStatusOnly: a paused DMCluster writes nothing.
func TestPausedSyncsMasterStatusOnly(t *testing.T) {
	t.Parallel()
	f := newSyncFixture()
	dc := parseDM(t, basicDM)
	dc.Spec.Paused = true
	for i, err := range f.sync(dc) {
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "create" || a.GetVerb() == "update" || a.GetVerb() == "patch" {
			t.Errorf("paused sync wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
