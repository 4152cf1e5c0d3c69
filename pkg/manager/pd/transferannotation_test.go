package pd

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

var transferNow = time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)

// transferFixture is a healthy 3-member PD led by basic-pd-0, its pods in
// the API; annotations are set per test.
func transferFixture(t *testing.T, annotations map[int32]map[string]string) (*Component, *kubefake.Clientset, *pdapi.FakeClient, *v1alpha1.TidbCluster, map[int32]*corev1.Pod) {
	t.Helper()
	kube := kubefake.NewClientset()
	ctl := pdapi.NewFakeControl()
	c := newFailoverPD(ctl, kube, transferNow)
	tc := membersTC([]bool{true, true, true}, transferNow.Add(-time.Hour))
	tc.Status.PD.Phase = v1alpha1.NormalPhase
	tc.Status.PD.Leader = v1alpha1.PDMember{Name: "basic-pd-0"}
	pods := map[int32]*corev1.Pod{}
	for o := int32(0); o < 3; o++ {
		name := "basic-pd-" + string(rune('0'+o))
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Annotations: annotations[o]}}
		if _, err := kube.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods[o] = p
	}
	kube.ClearActions()
	return c, kube, ctl.ClusterClient("ns", "basic"), tc, pods
}

func maintain(t *testing.T, c *Component, tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) *flow.RequeueError {
	t.Helper()
	ctx, revisits := flow.WithRevisits(context.Background())
	if err := c.MaintainPods(ctx, tc, pods); err != nil {
		t.Fatalf("MaintainPods: %v", err)
	}
	re, _ := flow.AsRequeue(revisits.Err())
	return re
}

func podDeletes(kube *kubefake.Clientset) []string {
	var out []string
	for _, a := range kube.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			out = append(out, d.Name)
		}
	}
	return out
}

func TestTransferLeaderAnnotationMovesLeadershipThenDeletesThePod(t *testing.T) {
	t.Parallel()
	c, kube, pd, tc, pods := transferFixture(t, map[int32]map[string]string{0: {label.AnnPDTransferLeader: label.EvictLeaderDeletePod}})

	if re := maintain(t, c, tc, pods); re == nil || re.After != transferPollInterval {
		t.Fatalf("revisit %v, want a look after %v at the new leader", re, transferPollInterval)
	}
	calls := pd.WriteCalls()
	if len(calls) != 1 || calls[0].Method != pdapi.MethodTransferPDLeader || calls[0].Args[0] != "basic-pd-1" {
		t.Fatalf("PD writes %v, want one transfer to basic-pd-1", calls)
	}
	if d := podDeletes(kube); len(d) != 0 {
		t.Fatalf("deleted %v while it still led", d)
	}

	tc.Status.PD.Leader = v1alpha1.PDMember{Name: "basic-pd-1"} // observed by the next sync
	pd.ResetCalls()
	maintain(t, c, tc, pods)
	if d := podDeletes(kube); len(d) != 1 || d[0] != "basic-pd-0" {
		t.Errorf("deletes %v, want basic-pd-0 once it no longer leads", d)
	}
	if w := pd.WriteCalls(); len(w) != 0 {
		t.Errorf("PD writes %v after the transfer", w)
	}
}

func TestTransferLeaderNoneKeepsThePod(t *testing.T) {
	t.Parallel()
	c, kube, pd, tc, pods := transferFixture(t, map[int32]map[string]string{0: {label.AnnPDTransferLeader: label.EvictLeaderNone}})
	maintain(t, c, tc, pods)
	if w := pd.WriteCalls(); len(w) != 1 {
		t.Fatalf("PD writes %v, want one transfer", w)
	}
	tc.Status.PD.Leader = v1alpha1.PDMember{Name: "basic-pd-1"}
	pd.ResetCalls()
	if re := maintain(t, c, tc, pods); re != nil {
		t.Errorf("revisit %v once the pod no longer leads", re)
	}
	if d := podDeletes(kube); len(d) != 0 || len(pd.WriteCalls()) != 0 {
		t.Errorf("deletes %v, PD writes %v for none once moved", d, pd.WriteCalls())
	}
}

func TestTransferLeaderWaitsWhilePDIsNotStable(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(tc *v1alpha1.TidbCluster){
		"upgrading":  func(tc *v1alpha1.TidbCluster) { tc.Status.PD.Phase = v1alpha1.UpgradePhase },
		"not synced": func(tc *v1alpha1.TidbCluster) { tc.Status.PD.Synced = false },
		"one unhealthy": func(tc *v1alpha1.TidbCluster) {
			m := tc.Status.PD.Members["basic-pd-2"]
			m.Health = false
			tc.Status.PD.Members["basic-pd-2"] = m
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, kube, pd, tc, pods := transferFixture(t, map[int32]map[string]string{1: {label.AnnPDTransferLeader: label.EvictLeaderDeletePod}})
			mutate(tc)
			re := maintain(t, c, tc, pods)
			if re == nil || re.After != transferUnstableInterval || !strings.Contains(re.Reason, "basic-pd-1") {
				t.Errorf("revisit %v, want one after %v naming the pod", re, transferUnstableInterval)
			}
			if d := podDeletes(kube); len(d) != 0 || len(pd.WriteCalls()) != 0 {
				t.Errorf("deletes %v, PD writes %v while PD is not stable", d, pd.WriteCalls())
			}
		})
	}
}

func TestTransferLeaderExpiredAnnotationIsRemoved(t *testing.T) {
	t.Parallel()
	c, kube, pd, tc, pods := transferFixture(t, map[int32]map[string]string{0: {label.AnnPDTransferLeader: label.EvictLeaderDeletePod,
		label.AnnPDTransferLeaderExpiration: transferNow.Add(-time.Second).Format(time.RFC3339)}})
	maintain(t, c, tc, pods)
	live, err := kube.CoreV1().Pods("ns").Get(context.Background(), "basic-pd-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Annotations) != 0 {
		t.Errorf("annotations %v kept after expiry", live.Annotations)
	}
	if d := podDeletes(kube); len(d) != 0 || len(pd.WriteCalls()) != 0 {
		t.Errorf("deletes %v, PD writes %v for an expired request", d, pd.WriteCalls())
	}
}

// TestTransferLeaderReadsTheLeaderAfterARefreshThatKeptIt: in a sync whose
// refresh kept the leader from an earlier reading, the annotation acts on
// who leads now — here basic-pd-0, though status still names basic-pd-2 —
// so the leader is moved before the pod is deleted.
func TestTransferLeaderReadsTheLeaderAfterARefreshThatKeptIt(t *testing.T) {
	t.Parallel()
	c, kube, pd, tc, pods := transferFixture(t, map[int32]map[string]string{0: {label.AnnPDTransferLeader: label.EvictLeaderDeletePod}})
	tc.Status.PD.Leader = v1alpha1.PDMember{Name: "basic-pd-2", Health: true}
	pd.SetMembers("basic-pd-0", &pdapi.Member{Name: "basic-pd-0"}, &pdapi.Member{Name: "basic-pd-1"}, &pdapi.Member{Name: "basic-pd-2"})
	ctx, revisits := flow.WithRevisits(flow.WithObservation(context.Background(), flow.ObserveFailures))
	if err := c.MaintainPods(ctx, tc, pods); err != nil {
		t.Fatalf("MaintainPods: %v", err)
	}
	if d := podDeletes(kube); len(d) != 0 {
		t.Fatalf("deleted %v while it led (status named an older leader)", d)
	}
	calls := pd.WriteCalls()
	if len(calls) != 1 || calls[0].Method != pdapi.MethodTransferPDLeader {
		t.Fatalf("PD writes %v, want one leader transfer off basic-pd-0", calls)
	}
	if re, _ := flow.AsRequeue(revisits.Err()); re == nil {
		t.Error("no revisit to see the transfer done")
	}
}
