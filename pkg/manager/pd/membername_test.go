package pd

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

const fqdnTail = ".basic-pd-peer.ns.svc.cluster.local"

// fqdnTC is membersTC with spec.clusterDomain set and its members named
// after their pods' FQDNs, as PD names them then.
func fqdnTC(health []bool) *v1alpha1.TidbCluster {
	tc := membersTC(health, transferNow.Add(-time.Hour))
	tc.Spec.ClusterDomain = "cluster.local"
	tc.Status.PD.Members = fqdnMembers(tc.Status.PD.Members)
	tc.Status.PD.Phase = v1alpha1.NormalPhase
	return tc
}

// pdWrites lists PD's writes as "Method:args".
func pdWrites(ctl *pdapi.FakeControl) []string {
	var out []string
	for _, c := range ctl.ClusterClient("ns", "basic").WriteCalls() {
		out = append(out, string(c.Method)+":"+fmt.Sprint(c.Args...))
	}
	return out
}

func TestPodOfMember(t *testing.T) {
	t.Parallel()
	tc := fqdnTC(nil)
	cases := map[string]string{
		"basic-pd-1":                               "basic-pd-1",
		"basic-pd-1.basic-pd-peer.ns.svc":          "basic-pd-1",
		"basic-pd-1" + fqdnTail:                    "basic-pd-1",
		"basic-pd-1.basic-pd-peer.other.svc":       "", // another namespace
		"basic-pd-1.basic-pd-peer.ns.svcx":         "",
		"basic-pd-1.other-pd-peer.ns.svc":          "", // another cluster's peer service
		"other-pd-1.other-pd-peer.ns.svc":          "",
		"basic-tikv-1.basic-pd-peer.ns.svc":        "",
		"basic-pd-x.basic-pd-peer.ns.svc":          "",
		"xbasic-pd-1":                              "",
		"basic-pd-12.basic-pd-peer.ns.svc.c.local": "basic-pd-12",
	}
	for name, want := range cases {
		if got, _, _ := podOfMember(tc, name); got != want {
			t.Errorf("podOfMember(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestFQDNMembersAreFoundByTheirPods: with members named after their pods'
// FQDNs, health, scale-in, the restart's leader transfer, failover, the
// orphan sweep, member-id labels and the transfer-leader annotation all
// find the member of a pod; a member of another namespace named after a
// pod of the same name is never taken for it.
func TestFQDNMembersAreFoundByTheirPods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("PodHealthy", func(t *testing.T) {
		t.Parallel()
		c := newFailoverPD(pdapi.NewFakeControl(), nil, transferNow)
		tc := fqdnTC([]bool{true, false})
		if !c.PodHealthy(tc, "basic-pd-0") || c.PodHealthy(tc, "basic-pd-1") {
			t.Fatalf("PodHealthy(basic-pd-0, basic-pd-1) want true, false")
		}
		other := fqdnTC(nil)
		other.Status.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0.basic-pd-peer.other.svc": {Health: true}}
		if c.PodHealthy(other, "basic-pd-0") {
			t.Fatal("a member of another namespace made basic-pd-0 healthy")
		}
	})
	t.Run("PreScaleIn deletes the FQDN member", func(t *testing.T) {
		t.Parallel()
		ctl := pdapi.NewFakeControl()
		c := newFailoverPD(ctl, nil, transferNow)
		tc := fqdnTC([]bool{true, true, true, true})
		tc.Status.PD.Leader = tc.Status.PD.Members["basic-pd-0"+fqdnTail]
		if err := c.PreScaleIn(ctx, tc, 3); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(pdWrites(ctl)); got != "[DeleteMember:basic-pd-3"+fqdnTail+"]" {
			t.Fatalf("PD writes %s", got)
		}
	})
	t.Run("PreScaleIn moves leadership off the FQDN leader", func(t *testing.T) {
		t.Parallel()
		ctl := pdapi.NewFakeControl()
		c := newFailoverPD(ctl, nil, transferNow)
		tc := fqdnTC([]bool{true, true, true, true})
		tc.Status.PD.Leader = tc.Status.PD.Members["basic-pd-3"+fqdnTail]
		if err := c.PreScaleIn(ctx, tc, 3); err == nil {
			t.Fatal("want a wait for the transfer")
		}
		if got := fmt.Sprint(pdWrites(ctl)); got != "[TransferPDLeader:basic-pd-0"+fqdnTail+"]" {
			t.Fatalf("PD writes %s", got)
		}
	})
	t.Run("PreUpgradePod moves leadership off the FQDN leader", func(t *testing.T) {
		t.Parallel()
		ctl := pdapi.NewFakeControl()
		c := newFailoverPD(ctl, nil, transferNow)
		tc := fqdnTC([]bool{true, true, true})
		tc.Status.PD.Leader = tc.Status.PD.Members["basic-pd-1"+fqdnTail]
		if err := c.PreUpgradePod(ctx, tc, 1); err == nil {
			t.Fatal("want a wait for the transfer")
		}
		if got := fmt.Sprint(pdWrites(ctl)); got != "[TransferPDLeader:basic-pd-2"+fqdnTail+"]" {
			t.Fatalf("PD writes %s", got)
		}
	})
	t.Run("PreUpgradePod quorum gate counts the FQDN member", func(t *testing.T) {
		t.Parallel()
		c := newFailoverPD(pdapi.NewFakeControl(), nil, transferNow)
		tc := fqdnTC([]bool{true, true, false})
		tc.Annotations = map[string]string{label.AnnPDCheckQuorumBeforeUpgrade: "true"}
		if err := c.PreUpgradePod(ctx, tc, 0); err == nil {
			t.Fatal("restarting basic-pd-0 leaves 1 of 3 healthy: want a wait")
		}
	})
	t.Run("failover records, replaces and recovers", func(t *testing.T) {
		t.Parallel()
		kube := kubefake.NewClientset()
		ctl := pdapi.NewFakeControl()
		c := newFailoverPD(ctl, kube, transferNow)
		tc := fqdnTC([]bool{true, false, true})
		if err := c.Failover(ctx, tc); err == nil {
			t.Fatal("recording a failure should requeue")
		}
		f, ok := tc.Status.PD.FailureMembers["basic-pd-1"+fqdnTail]
		if !ok || f.PodName != "basic-pd-1" || f.MemberID != "11" {
			t.Fatalf("failure members %+v, want basic-pd-1's member recorded", tc.Status.PD.FailureMembers)
		}
		if err := c.Failover(ctx, tc); err != nil {
			t.Fatal(err)
		}
		var deleted []string
		for _, a := range kube.Actions() {
			if d, ok := a.(k8stesting.DeleteActionImpl); ok {
				deleted = append(deleted, d.Name)
			}
		}
		if fmt.Sprint(deleted) != "[pd-basic-pd-1 basic-pd-1]" || c.FailoverReplicas(tc) != 1 {
			t.Fatalf("deleted %v, failover replicas %d", deleted, c.FailoverReplicas(tc))
		}
		m := tc.Status.PD.Members["basic-pd-1"+fqdnTail]
		m.Health = true
		tc.Status.PD.Members["basic-pd-1"+fqdnTail] = m
		if err := c.Failover(ctx, tc); err != nil || len(tc.Status.PD.FailureMembers) != 0 {
			t.Fatalf("want recovery: %v %+v", err, tc.Status.PD.FailureMembers)
		}
	})
	t.Run("orphan FQDN member is removed", func(t *testing.T) {
		t.Parallel()
		ctl := pdapi.NewFakeControl()
		c := newFailoverPD(ctl, kubefake.NewClientset(), transferNow)
		tc := fqdnTC([]bool{true, true, true, false})
		tc.Spec.PD.Replicas = 3
		tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 3}
		if err := c.Failover(ctx, tc); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(pdWrites(ctl)); got != "[DeleteMemberByID:13]" {
			t.Fatalf("PD writes %s, want basic-pd-3's member deleted", got)
		}
	})
	t.Run("member-id labels name pods", func(t *testing.T) {
		t.Parallel()
		tc := fqdnTC([]bool{true, true})
		tc.Status.PD.Members["basic-pd-0.basic-pd-peer.other.svc"] = v1alpha1.PDMember{ID: "99"}
		if got := fmt.Sprint(memberIDs(tc)); got != "map[basic-pd-0:10 basic-pd-1:11]" {
			t.Fatalf("memberIDs %s", got)
		}
	})
	t.Run("transfer-leader annotation", func(t *testing.T) {
		t.Parallel()
		c, _, pd, _, pods := transferFixture(t, map[int32]map[string]string{0: {label.AnnPDTransferLeader: label.EvictLeaderNone}})
		tc := fqdnTC([]bool{true, true, true})
		tc.Status.PD.Leader = tc.Status.PD.Members["basic-pd-0"+fqdnTail]
		if re := maintain(t, c, tc, pods); re == nil {
			t.Fatal("want a revisit after the transfer")
		}
		calls := pd.WriteCalls()
		if len(calls) != 1 || calls[0].Method != pdapi.MethodTransferPDLeader || calls[0].Args[0] != "basic-pd-1"+fqdnTail {
			t.Fatalf("PD writes %v, want a transfer to basic-pd-1's member", calls)
		}
	})
}
