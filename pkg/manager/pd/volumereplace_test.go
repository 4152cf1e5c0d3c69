package pd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestPrepareVolumeReplace: a PD member leaves for its volume replacement
// only with PD answering, in phase Normal and keeping a quorum without it
// (else a Warning ReplaceVolumeRefused); the leader first hands leadership
// over to another healthy member of this cluster, and waits when there is
// none; a member named after its pod's FQDN is found; a member PD does not
// list is released at once only when its pod is not Ready.
func TestPrepareVolumeReplace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		health      []bool
		pod         string
		leader      string
		synced      bool
		phase       v1alpha1.MemberPhase
		podLabel    string
		ready       bool
		fqdn        bool
		peers       []bool
		wantNil     bool
		wantMethods string
		wantEvent   string
	}{
		{name: "member", health: []bool{true, true, true, true}, pod: "basic-pd-1", leader: "basic-pd-0", synced: true,
			phase: v1alpha1.NormalPhase, wantNil: true, wantMethods: "DeleteMember", wantEvent: "Normal PDMemberDeleted"},
		{name: "leader", health: []bool{true, true, true, true}, pod: "basic-pd-0", leader: "basic-pd-0", synced: true,
			phase: v1alpha1.NormalPhase, wantMethods: "TransferPDLeader", wantEvent: "Normal PDLeaderTransferred"},
		{name: "already gone", health: []bool{true, true, true}, pod: "basic-pd-3", synced: true, phase: v1alpha1.NormalPhase, wantNil: true},
		{name: "Ready but not listed yet", health: []bool{true, true, true}, pod: "basic-pd-3", ready: true, synced: true,
			phase: v1alpha1.NormalPhase},
		{name: "FQDN member", health: []bool{true, true, true, true}, pod: "basic-pd-1", leader: "basic-pd-0", fqdn: true, ready: true,
			synced: true, phase: v1alpha1.NormalPhase, wantNil: true, wantMethods: "DeleteMember:basic-pd-1.basic-pd-peer.ns.svc.cluster.local",
			wantEvent: "Normal PDMemberDeleted"},
		{name: "FQDN leader", health: []bool{true, true, true, true}, pod: "basic-pd-0", leader: "basic-pd-0", fqdn: true, ready: true,
			synced: true, phase: v1alpha1.NormalPhase, wantMethods: "TransferPDLeader:basic-pd-1.basic-pd-peer.ns.svc.cluster.local",
			wantEvent: "Normal PDLeaderTransferred"},
		{name: "FQDN not Ready and not listed", health: []bool{true, true, true}, pod: "basic-pd-3", fqdn: true, synced: true,
			phase: v1alpha1.NormalPhase, wantNil: true},
		{name: "leader with only peer candidates", health: []bool{true, false}, peers: []bool{true, true, true}, pod: "basic-pd-0",
			leader: "basic-pd-0", ready: true, synced: true, phase: v1alpha1.NormalPhase},
		{name: "not synced", health: []bool{true, true, true}, pod: "basic-pd-1", phase: v1alpha1.NormalPhase},
		{name: "scaling", health: []bool{true, true, true}, pod: "basic-pd-1", synced: true, phase: v1alpha1.ScalePhase},
		{name: "no quorum", health: []bool{true, false, false, true}, pod: "basic-pd-0", synced: true,
			phase: v1alpha1.NormalPhase, wantEvent: "Warning ReplaceVolumeRefused"},
		{name: "only member", health: []bool{true}, pod: "basic-pd-0", synced: true,
			phase: v1alpha1.NormalPhase, wantEvent: "Warning ReplaceVolumeRefused"},
		{name: "another member's ID", health: []bool{true, true, true, true}, pod: "basic-pd-1", synced: true,
			phase: v1alpha1.NormalPhase, podLabel: "99"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctl := pdapi.NewFakeControl()
			c := newFailoverPD(ctl, nil, transferNow)
			rec := record.NewFakeRecorder(10)
			c.recorder = rec
			tc := membersTC(tt.health, transferNow.Add(-time.Hour))
			tc.Status.PD.Synced, tc.Status.PD.Phase = tt.synced, tt.phase
			if tt.fqdn {
				tc.Spec.ClusterDomain = "cluster.local"
				tc.Status.PD.Members = fqdnMembers(tc.Status.PD.Members)
				if tt.leader != "" {
					tt.leader += ".basic-pd-peer.ns.svc.cluster.local"
				}
			}
			tc.Status.PD.PeerMembers = peerMembers(tt.peers)
			tc.Status.PD.Leader = v1alpha1.PDMember{Name: tt.leader}
			pod := &corev1.Pod{}
			pod.Name, pod.Namespace = tt.pod, "ns"
			if tt.ready {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
			if tt.podLabel != "" {
				pod.Labels = map[string]string{label.MemberIDLabelKey: tt.podLabel}
			}
			err := c.PrepareVolumeReplace(context.Background(), tc, pod)
			if (err == nil) != tt.wantNil {
				t.Fatalf("PrepareVolumeReplace = %v, want nil: %v", err, tt.wantNil)
			}
			if _, waiting := flow.AsRequeue(err); err != nil && !waiting {
				t.Fatalf("PrepareVolumeReplace = %v, want a wait", err)
			}
			var methods []string
			for _, call := range ctl.ClusterClient("ns", "basic").WriteCalls() {
				methods = append(methods, string(call.Method))
				if tt.fqdn {
					methods[len(methods)-1] += ":" + fmt.Sprint(call.Args...)
				}
			}
			if got := strings.Join(methods, ","); got != tt.wantMethods {
				t.Errorf("PD writes %q, want %q", got, tt.wantMethods)
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if got := strings.Join(events, "\n"); tt.wantEvent != "" && !strings.HasPrefix(got, tt.wantEvent) || tt.wantEvent == "" && got != "" {
				t.Errorf("events %q, want %q", got, tt.wantEvent)
			}
		})
	}
}

// fqdnMembers renames members the way PD names them with
// spec.clusterDomain set: after the pod's FQDN.
func fqdnMembers(in map[string]v1alpha1.PDMember) map[string]v1alpha1.PDMember {
	out := map[string]v1alpha1.PDMember{}
	for name, m := range in {
		m.Name = name + ".basic-pd-peer.ns.svc.cluster.local"
		out[m.Name] = m
	}
	return out
}

// peerMembers are members of a peer cluster sharing the PD.
func peerMembers(health []bool) map[string]v1alpha1.PDMember {
	if len(health) == 0 {
		return nil
	}
	out := map[string]v1alpha1.PDMember{}
	for i, h := range health {
		name := "peer-pd-" + strconv.Itoa(i) + ".peer-pd-peer.other.svc.cluster.local"
		out[name] = v1alpha1.PDMember{Name: name, ID: "2" + strconv.Itoa(i), Health: h}
	}
	return out
}
