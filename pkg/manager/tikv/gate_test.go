package tikv

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

func pdMembers(healthy ...bool) map[string]v1alpha1.PDMember {
	out := map[string]v1alpha1.PDMember{}
	for i, h := range healthy {
		name := "m" + string(rune('0'+i))
		out[name] = v1alpha1.PDMember{Name: name, Health: h}
	}
	return out
}

// TiKV waits for a PD quorum of healthy members and Ready pods (peer
// clusters' members count for both), and not for a PD it does not own.
func TestGate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		replicas int32
		members  map[string]v1alpha1.PDMember
		peers    map[string]v1alpha1.PDMember
		ready    int32
		phase    v1alpha1.MemberPhase
		noPD     bool
		wait     string // "" when TiKV may proceed, else a part of the reason
	}{
		{name: "all healthy and Ready", replicas: 3, members: pdMembers(true, true, true), ready: 3},
		{name: "quorum of 3 is 2", replicas: 3, members: pdMembers(true, true, false), ready: 2},
		{name: "1 of 3 healthy", replicas: 3, members: pdMembers(true, false, false), ready: 3, wait: "1 of 3 members healthy, 2 needed"},
		{name: "healthy but not Ready", replicas: 3, members: pdMembers(true, true, true), ready: 1, wait: "PD pods: 1 Ready, 2 needed"},
		{name: "no status yet", replicas: 1, wait: "PD has not answered yet"},
		{name: "scaling out from one member", replicas: 3, members: pdMembers(true), ready: 1},
		{name: "single member", replicas: 1, members: pdMembers(true), ready: 1},
		{name: "even count needs more than half", replicas: 4, members: pdMembers(true, true, false, false), ready: 4, wait: "2 of 4 members healthy, 3 needed"},
		{name: "peer members make the quorum", replicas: 1, members: pdMembers(false), peers: pdMembers(true, true), ready: 0},
		{name: "peer members enlarge the quorum", replicas: 1, members: pdMembers(true), peers: pdMembers(false, false), ready: 1, wait: "1 of 3 members healthy, 2 needed"},
		{name: "suspended PD", replicas: 1, members: pdMembers(true), ready: 1, phase: v1alpha1.SuspendPhase, wait: "suspended"},
		{name: "no own PD: nothing to wait for", noPD: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := observedCluster()
			tc.Spec.PD.Replicas = c.replicas
			if c.noPD {
				tc.Spec.PD = nil
				tc.Spec.Cluster = &v1alpha1.TidbClusterRef{Name: "main"}
			}
			tc.Status.PD.Members, tc.Status.PD.PeerMembers = c.members, c.peers
			tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: c.ready}
			tc.Status.PD.Phase = c.phase
			got := (&Component{}).Gate(tc)
			if c.wait == "" && got != "" || c.wait != "" && !strings.Contains(got, c.wait) {
				t.Errorf("Gate = %q, want %q", got, c.wait)
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	t.Parallel()
	up := v1alpha1.TiKVStore{State: pdapi.StoreStateNameUp}
	down := v1alpha1.TiKVStore{State: pdapi.StoreStateNameDown}
	cases := []struct {
		name   string
		noTiKV bool
		sts    *appsv1.StatefulSetStatus
		stores map[string]v1alpha1.TiKVStore
		peers  map[string]v1alpha1.TiKVStore
		want   bool
	}{
		{name: "an Up store and a Ready pod", sts: &appsv1.StatefulSetStatus{ReadyReplicas: 1}, stores: map[string]v1alpha1.TiKVStore{"1": up}, want: true},
		{name: "a peer store counts", sts: &appsv1.StatefulSetStatus{ReadyReplicas: 1}, peers: map[string]v1alpha1.TiKVStore{"9": up}, want: true},
		{name: "no Ready pod", sts: &appsv1.StatefulSetStatus{ReadyReplicas: 0}, stores: map[string]v1alpha1.TiKVStore{"1": up}},
		{name: "no StatefulSet status", stores: map[string]v1alpha1.TiKVStore{"1": up}},
		{name: "only Down stores", sts: &appsv1.StatefulSetStatus{ReadyReplicas: 3}, stores: map[string]v1alpha1.TiKVStore{"1": down, "2": down}},
		{name: "no stores yet", sts: &appsv1.StatefulSetStatus{ReadyReplicas: 3}},
		{name: "no TiKV of its own", noTiKV: true, want: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := observedCluster()
			if c.noTiKV {
				tc.Spec.TiKV = nil
			}
			tc.Status.TiKV.StatefulSet, tc.Status.TiKV.Stores, tc.Status.TiKV.PeerStores = c.sts, c.stores, c.peers
			got, reason := Available(tc)
			if got != c.want || got == (reason != "") {
				t.Errorf("Available = %v, %q; want %v with a reason only when false", got, reason, c.want)
			}
		})
	}
}
