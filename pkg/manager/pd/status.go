package pd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// ClientOptions says how the operator reaches tc's PD.
func ClientOptions(tc *v1alpha1.TidbCluster) pdapi.ClusterOptions {
	return pdapi.ClusterOptions{TLSEnabled: tlsEnabled(tc), ClusterDomain: tc.Spec.ClusterDomain}
}

// observeMembers reads PD's health and leader (and the cluster ID, once)
// into status.pd (a refresh that reads only failures keeps the leader while
// every member is as healthy as before: leaderUnchanged):
// members of this cluster (matched by client URL), peer members of other
// clusters sharing the PD, the leader and synced. A member's
// lastTransitionTime moves only when its health changes, because failover
// timers start there. PD unreachable ⇒ synced=false and the old members kept.
func observeMembers(ctx context.Context, ctl pdapi.Control, clk clock.PassiveClock, tc *v1alpha1.TidbCluster) error {
	s := &tc.Status.PD
	client := ctl.GetPDClient(tc.Namespace, tc.Name, ClientOptions(tc))
	health, err := client.GetHealth(ctx)
	if err != nil {
		s.Synced = false
		return fmt.Errorf("PD health: %w", err)
	}
	var leader *pdapi.Member
	if flow.FailuresOnly(ctx) && leaderUnchanged(s, health) {
		leader = &pdapi.Member{Name: s.Leader.Name}
	} else if leader, err = client.GetLeader(ctx); err != nil {
		s.Synced = false
		return fmt.Errorf("PD leader: %w", err)
	}
	if tc.Status.ClusterID == "" { // a PD cluster keeps its ID for life
		cluster, err := client.GetCluster(ctx)
		if err != nil {
			s.Synced = false
			return fmt.Errorf("PD cluster: %w", err)
		}
		tc.Status.ClusterID = strconv.FormatUint(cluster.ID, 10)
	}
	now := metav1.NewTime(clk.Now())
	members, peers := map[string]v1alpha1.PDMember{}, map[string]v1alpha1.PDMember{}
	for _, h := range health {
		m := v1alpha1.PDMember{Name: h.Name, ID: strconv.FormatUint(h.MemberID, 10), Health: h.Health}
		if len(h.ClientUrls) > 0 {
			m.ClientURL = h.ClientUrls[0]
		}
		target, prev := peers, s.PeerMembers
		if ownMemberURL(tc, m.ClientURL) {
			target, prev = members, s.Members
		}
		m.LastTransitionTime = now
		if old, ok := prev[m.Name]; ok && old.Health == m.Health && !old.LastTransitionTime.IsZero() {
			m.LastTransitionTime = old.LastTransitionTime
		}
		target[m.Name] = m
	}
	s.Members, s.PeerMembers = nilIfEmpty(members), nilIfEmpty(peers)
	s.Leader = leaderOf(s, leader)
	s.Synced = true
	return nil
}

// leaderOf returns PD's leader as status s lists it (among this cluster's
// members or the peers), or as PD named it; the zero member for nil.
func leaderOf(s *v1alpha1.PDStatus, leader *pdapi.Member) v1alpha1.PDMember {
	if leader == nil {
		return v1alpha1.PDMember{}
	}
	if m, ok := s.Members[leader.Name]; ok {
		return m
	}
	if m, ok := s.PeerMembers[leader.Name]; ok {
		return m
	}
	return v1alpha1.PDMember{Name: leader.Name, ID: strconv.FormatUint(leader.MemberID, 10), Health: true}
}

// readLeader reads PD's leader into status.pd.leader when this sync did
// not read it: a maintenance request acts on who leads now, not on what a
// refresh that kept the leader saw.
func (c *Component) readLeader(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	if flow.ObservationOf(ctx) == flow.ObserveAll {
		return nil
	}
	leader, err := c.client(tc).GetLeader(ctx)
	if err != nil {
		return fmt.Errorf("PD leader: %w", err)
	}
	tc.Status.PD.Leader = leaderOf(&tc.Status.PD, leader)
	return nil
}

// leaderUnchanged reports whether status s (read from PD before) names a
// leader among its healthy members and PD's health lists the same members
// (this cluster's and peers') with the same health: nothing a failure
// would change, so a refresh that reads only failures keeps that leader.
func leaderUnchanged(s *v1alpha1.PDStatus, health []pdapi.MemberHealth) bool {
	if !s.Synced || s.Leader.Name == "" || !s.Leader.Health || len(health) != len(s.Members)+len(s.PeerMembers) {
		return false
	}
	for _, h := range health {
		m, ok := s.Members[h.Name]
		if !ok {
			m, ok = s.PeerMembers[h.Name]
		}
		if !ok || m.Health != h.Health {
			return false
		}
	}
	return s.Members[s.Leader.Name].Health || s.PeerMembers[s.Leader.Name].Health
}

// ownMemberURL reports whether url is the client URL of one of this
// cluster's PD pods: http(s)://<tc>-pd-<n>.<tc>-pd-peer.<ns>.svc[.<domain>]:<port>.
func ownMemberURL(tc *v1alpha1.TidbCluster, url string) bool {
	rest, ok := strings.CutPrefix(url, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(url, "https://"); !ok {
			return false
		}
	}
	return names.NewPeerAddress(tc.Name, tc.Namespace, names.PD).MatchString(rest)
}

func nilIfEmpty(m map[string]v1alpha1.PDMember) map[string]v1alpha1.PDMember {
	if len(m) == 0 {
		return nil
	}
	return m
}

// HealthyMembers counts this cluster's and peer clusters' healthy PD members.
func HealthyMembers(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.PD.Members {
		if m.Health {
			n++
		}
	}
	for _, m := range tc.Status.PD.PeerMembers {
		if m.Health {
			n++
		}
	}
	return n
}

// Membership is the number of members PD reports (this cluster's and its
// peers'), the size its Raft quorum is counted from.
func Membership(tc *v1alpha1.TidbCluster) int {
	return len(tc.Status.PD.Members) + len(tc.Status.PD.PeerMembers)
}

// Available reports whether PD has a quorum of healthy members and Ready
// pods: the gate TiKV waits on. It returns why not when it is not.
func Available(tc *v1alpha1.TidbCluster) (bool, string) {
	if tc.Spec.PD == nil {
		return true, "" // an external PD (spec.cluster / pdAddresses)
	}
	// Quorum is of the members PD has, not of the replicas wanted: while
	// PD scales out from one member, that one member is a quorum.
	total := Membership(tc)
	quorum := total/2 + 1
	healthy := HealthyMembers(tc)
	switch {
	case total == 0 && !tc.Status.PD.Synced:
		// Not read (yet): the conditions name why (reach.go), not this.
		return false, "waiting for a PD quorum: PD has not answered yet"
	case total == 0:
		return false, "waiting for a PD quorum: PD reports no member yet"
	}
	if healthy < quorum {
		return false, fmt.Sprintf("waiting for a PD quorum: %d of %d members healthy, %d needed", healthy, total, quorum)
	}
	ready := 0
	if sts := tc.Status.PD.StatefulSet; sts != nil {
		ready = int(sts.ReadyReplicas)
	}
	if ready+len(tc.Status.PD.PeerMembers) < quorum {
		return false, fmt.Sprintf("waiting for PD pods: %d Ready, %d needed", ready, quorum)
	}
	if tc.Status.PD.Phase == v1alpha1.SuspendPhase {
		return false, "PD is suspended"
	}
	return true, ""
}

// ClientFor returns the client of the PD that tc's stores and servers use:
// the cluster's own PD, the PD of the cluster spec.cluster names, or the
// first of spec.pdAddresses.
func ClientFor(ctl pdapi.Control, tc *v1alpha1.TidbCluster) pdapi.Client {
	opts := ClientOptions(tc)
	if tc.Spec.PD != nil {
		return ctl.GetPDClient(tc.Namespace, tc.Name, opts)
	}
	if ref := tc.Spec.Cluster; ref != nil && ref.Name != "" {
		ns := ref.Namespace
		if ns == "" {
			ns = tc.Namespace
		}
		opts.ClusterDomain = ref.ClusterDomain
		return ctl.GetPDClient(ns, ref.Name, opts)
	}
	if len(tc.Spec.PDAddresses) > 0 {
		opts.ClientURL = tc.Spec.PDAddresses[0]
	}
	return ctl.GetPDClient(tc.Namespace, tc.Name, opts)
}
