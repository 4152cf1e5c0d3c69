package pd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// newFailoverPD is PD with failover after a one-minute grace period,
// reaching PD through ctl and deleting pods and PVCs through an applier
// over kube, at now.
func newFailoverPD(ctl pdapi.Control, kube *kubefake.Clientset, now time.Time) *Component {
	rec := record.NewFakeRecorder(10)
	return &Component{pd: ctl, clock: clocktesting.NewFakeClock(now),
		failover: component.FailoverConfig{Enabled: true, Period: time.Minute},
		writer:   apply.NewApplier(kube, rec, apply.Caches{}), recorder: rec}
}

func membersTC(health []bool, since time.Time) *v1alpha1.TidbCluster {
	one := int32(1)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: int32(len(health)), MaxFailoverCount: &one}}}
	tc.Status.PD.Synced = true
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{}
	for i, h := range health {
		name := "basic-pd-" + string(rune('0'+i))
		tc.Status.PD.Members[name] = v1alpha1.PDMember{Name: name, ID: "1" + string(rune('0'+i)), Health: h, LastTransitionTime: metav1.NewTime(since)}
	}
	return tc
}

func TestPDFailoverRecordsThenReplacesThenRecovers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	kube := kubefake.NewClientset()
	ctl := pdapi.NewFakeControl()
	h := newFailoverPD(ctl, kube, now)
	tc := membersTC([]bool{true, false, true}, now.Add(-time.Hour))

	if err := h.Failover(context.Background(), tc); err == nil {
		t.Fatal("recording a failure should requeue")
	}
	if f, ok := tc.Status.PD.FailureMembers["basic-pd-1"]; !ok || f.MemberDeleted || h.FailoverReplicas(tc) != 0 {
		t.Fatalf("want basic-pd-1 recorded, not deleted: %+v", tc.Status.PD.FailureMembers)
	}
	if err := h.Failover(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if !tc.Status.PD.FailureMembers["basic-pd-1"].MemberDeleted || h.FailoverReplicas(tc) != 1 {
		t.Fatalf("want the member deleted and one extra replica: %+v", tc.Status.PD.FailureMembers)
	}
	var deletes []string
	for _, a := range kube.Actions() {
		if a.GetVerb() == "delete" {
			deletes = append(deletes, a.GetResource().Resource)
		}
	}
	if len(deletes) != 2 {
		t.Fatalf("want the PVC and the pod deleted, got %v", deletes)
	}
	calls := ctl.ClusterClient("ns", "basic").WriteCalls()
	if len(calls) != 1 || calls[0].Method != pdapi.MethodDeleteMemberByID {
		t.Fatalf("want one DeleteMemberByID, got %v", calls)
	}
	m := tc.Status.PD.Members["basic-pd-1"]
	m.Health = true
	tc.Status.PD.Members["basic-pd-1"] = m
	if err := h.Failover(context.Background(), tc); err != nil || len(tc.Status.PD.FailureMembers) != 0 {
		t.Fatalf("want recovery: %v %+v", err, tc.Status.PD.FailureMembers)
	}
}

func TestPDFailoverNeverActsWithoutQuorum(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	kube := kubefake.NewClientset()
	ctl := pdapi.NewFakeControl()
	h := newFailoverPD(ctl, kube, now)
	tc := membersTC([]bool{true, false, false}, now.Add(-time.Hour))
	// Nothing to act on: no failure is recorded and the sync goes on.
	if err := h.Failover(context.Background(), tc); err != nil || len(tc.Status.PD.FailureMembers) != 0 || len(kube.Actions()) != 0 {
		t.Fatalf("without a healthy quorum nothing may happen: %v %+v %v", err, tc.Status.PD.FailureMembers, kube.Actions())
	}
	// A failure recorded earlier waits, and says why.
	tc.Status.PD.FailureMembers = map[string]v1alpha1.PDFailureMember{"basic-pd-1": {PodName: "basic-pd-1", MemberID: "11"}}
	err := h.Failover(context.Background(), tc)
	if re, waiting := flow.AsRequeue(err); !waiting || !strings.Contains(re.Reason, "1 of 3 PD members healthy") {
		t.Fatalf("want a wait naming the quorum, got %v", err)
	}
	if len(kube.Actions()) != 0 || len(ctl.ClusterClient("ns", "basic").WriteCalls()) != 0 {
		t.Fatalf("nothing may be deleted without a quorum: %v", kube.Actions())
	}
}

// TestPDFailoverCountsQuorumFromMembers scales PD out from one healthy
// member: that member is a quorum of the membership PD has, so neither
// failover nor the TiKV gate may hold the scale-out back.
func TestPDFailoverCountsQuorumFromMembers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	kube := kubefake.NewClientset()
	h := newFailoverPD(pdapi.NewFakeControl(), kube, now)
	tc := membersTC([]bool{true}, now.Add(-time.Hour))
	tc.Spec.PD.Replicas = 3
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1}
	if err := h.Failover(context.Background(), tc); err != nil || len(kube.Actions()) != 0 {
		t.Fatalf("scale-out from one member must not wait on failover: %v %v", err, kube.Actions())
	}
	if ok, why := Available(tc); !ok {
		t.Fatalf("one healthy member of one is available: %s", why)
	}
}

func TestMembersWithoutPodsAreRemovedFromPD(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		name        string
		stsReplicas int32  // pods the StatefulSet has
		want        string // member IDs deleted from PD
	}{
		// basic-pd-3 (ID 13) joined PD while it was being scaled in, after
		// its member had been deleted; its pod is gone now.
		{name: "pod gone", stsReplicas: 3, want: "[13]"},
		// basic-pd-3's pod still exists: scale-in removes the member first.
		{name: "pod still there", stsReplicas: 4, want: "[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctl := pdapi.NewFakeControl()
			h := newFailoverPD(ctl, kubefake.NewClientset(), now)
			tc := membersTC([]bool{true, true, true, false}, now)
			tc.Spec.PD.Replicas = 3
			tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{Replicas: c.stsReplicas}
			if err := h.Failover(context.Background(), tc); err != nil {
				t.Fatal(err)
			}
			deleted := []any{}
			for _, call := range ctl.ClusterClient("ns", "basic").WriteCalls() {
				if call.Method == pdapi.MethodDeleteMemberByID {
					deleted = append(deleted, call.Args...)
				}
			}
			if got := fmt.Sprint(deleted); got != c.want {
				t.Errorf("deleted member IDs %s, want %s", got, c.want)
			}
			if _, still := tc.Status.PD.Members["basic-pd-3"]; still == (c.want != "[]") {
				t.Errorf("basic-pd-3 in status after the sweep: %v", still)
			}
		})
	}
}
