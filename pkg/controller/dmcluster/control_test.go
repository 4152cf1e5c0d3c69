package dmcluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned/fake"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// fakeMember records its syncs and answers err, after fill changed status.
type fakeMember struct {
	name  string
	err   error
	fill  func(*v1alpha1.DMCluster)
	syncs int
}

func (m *fakeMember) Name() string { return m.name }
func (m *fakeMember) Sync(_ context.Context, dc *v1alpha1.DMCluster) error {
	m.syncs++
	if m.fill != nil {
		m.fill(dc)
	}
	return m.err
}

func dm() *v1alpha1.DMCluster {
	return &v1alpha1.DMCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1", Generation: 2},
		Spec: v1alpha1.DMClusterSpec{Version: "v8.5.7", Master: v1alpha1.MasterSpec{Replicas: 1},
			Worker: &v1alpha1.WorkerSpec{Replicas: 1}}}
}

func healthy(dc *v1alpha1.DMCluster) {
	sts := &appsv1.StatefulSetStatus{CurrentRevision: "r1", UpdateRevision: "r1", ReadyReplicas: 1}
	dc.Status.Master.StatefulSet, dc.Status.Worker.StatefulSet = sts, sts
	dc.Status.Master.Members = map[string]v1alpha1.MasterMember{"basic-dm-master-0": {Name: "basic-dm-master-0", Health: true}}
	dc.Status.Worker.Members = map[string]v1alpha1.WorkerMember{"basic-dm-worker-0": {Name: "basic-dm-worker-0", Stage: "free"}}
}

func run(t *testing.T, dc *v1alpha1.DMCluster, members ...Member) (*v1alpha1.DMCluster, *record.FakeRecorder, error) {
	t.Helper()
	client := fake.NewSimpleClientset(dc.DeepCopy())
	rec := record.NewFakeRecorder(10)
	err := NewControl(members, client, rec).Sync(context.Background(), dc)
	got, gerr := client.PingcapV1alpha1().DMClusters("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	if gerr != nil {
		t.Fatal(gerr)
	}
	return got, rec, err
}

func TestReadyOnceEveryMemberIsUp(t *testing.T) {
	disc, master, worker := &fakeMember{name: "discovery"}, &fakeMember{name: "dm-master", fill: healthy}, &fakeMember{name: "dm-worker"}
	got, _, err := run(t, dm(), disc, master, worker)
	if err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, "Ready")
	if c == nil || c.Status != metav1.ConditionTrue || c.Message != "DM cluster is fully up and running" {
		t.Errorf("Ready = %+v, want True", c)
	}
	if got.Spec.Master.BaseImage != "" {
		t.Errorf("the in-memory defaults were written into the spec: %q", got.Spec.Master.BaseImage)
	}
}

func TestReadyReasonsInV16Order(t *testing.T) {
	cases := map[string]struct {
		mutate func(*v1alpha1.DMCluster)
		reason string
		msg    string
	}{
		"rolling": {func(dc *v1alpha1.DMCluster) {
			dc.Status.Master.StatefulSet = &appsv1.StatefulSetStatus{UpdateRevision: "r2"}
		},
			ReasonStatefulSetNotUpToDate, "Statefulset(s) are in progress"},
		"master down": {func(dc *v1alpha1.DMCluster) {
			dc.Status.Master.Members["basic-dm-master-0"] = v1alpha1.MasterMember{Health: false}
		}, ReasonDMMasterUnhealthy, "dm-master(s) are not healthy"},
		"worker offline": {func(dc *v1alpha1.DMCluster) {
			dc.Status.Worker.Members["basic-dm-worker-0"] = v1alpha1.WorkerMember{Stage: "offline"}
		}, ReasonDMMasterUnhealthy, "some dm-worker(s) are not up yet"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			m := &fakeMember{name: "dm-master", fill: func(dc *v1alpha1.DMCluster) { healthy(dc); c.mutate(dc) }}
			got, _, _ := run(t, dm(), &fakeMember{name: "discovery"}, m)
			cond := meta.FindStatusCondition(got.Status.Conditions, "Ready")
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != c.reason || cond.Message != c.msg {
				t.Errorf("Ready = %+v, want False %s %q", cond, c.reason, c.msg)
			}
		})
	}
}

func TestInvalidSpecIsReportedAndNothingSyncs(t *testing.T) {
	dc := dm()
	dc.Spec.Version = "v1.0.7"
	m := &fakeMember{name: "discovery"}
	got, rec, err := run(t, dc, m)
	if err != nil {
		t.Fatalf("an invalid spec is retried: %v", err)
	}
	if m.syncs != 0 {
		t.Error("a member synced an invalid DMCluster")
	}
	c := meta.FindStatusCondition(got.Status.Conditions, "Ready")
	if c == nil || c.Reason != ReasonFailedValidation || !strings.Contains(c.Message, "v1.x.y") {
		t.Errorf("Ready = %+v, want FailedValidation naming the version", c)
	}
	if ev := <-rec.Events; !strings.Contains(ev, "Warning FailedValidation") {
		t.Errorf("event %q, want a FailedValidation Warning", ev)
	}
}

func TestDiscoveryErrorEndsTheSyncOthersAreCollected(t *testing.T) {
	disc, master := &fakeMember{name: "discovery", err: errors.New("boom")}, &fakeMember{name: "dm-master"}
	if _, _, err := run(t, dm(), disc, master); err == nil || master.syncs != 0 {
		t.Errorf("err %v, dm-master synced %d times; want the discovery error and no dm-master sync", err, master.syncs)
	}
	master.err = flow.Requeue("waiting for dm-master cluster running")
	worker := &fakeMember{name: "dm-worker"}
	_, _, err := run(t, dm(), &fakeMember{name: "discovery"}, master, worker)
	if _, wait := flow.AsRequeue(err); !wait || worker.syncs != 1 {
		t.Errorf("err %v, worker syncs %d; want the master's wait returned and the worker synced", err, worker.syncs)
	}
}

func TestConvergedSyncWritesNothing(t *testing.T) {
	dc := dm()
	client := fake.NewSimpleClientset(dc.DeepCopy())
	ctl := NewControl([]Member{&fakeMember{name: "discovery"}, &fakeMember{name: "dm-master", fill: healthy}}, client, record.NewFakeRecorder(10))
	if err := ctl.Sync(context.Background(), dc.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	written, _ := client.PingcapV1alpha1().DMClusters("ns").Get(context.Background(), "basic", metav1.GetOptions{})
	client.ClearActions()
	if err := ctl.Sync(context.Background(), written.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("a converged sync issued %d requests: %v", n, client.Actions())
	}
}

func TestDeleteSlotsAreNamedUnsupported(t *testing.T) {
	dc := dm()
	dc.Annotations = map[string]string{"dm-worker.tidb.pingcap.com/delete-slots": "[1]"}
	got, _, err := run(t, dc, &fakeMember{name: "discovery"})
	if err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, ConditionUnsupported)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "dm-worker.tidb.pingcap.com/delete-slots") {
		t.Errorf("Unsupported = %+v, want it to name the delete-slots annotation", c)
	}
}
