package pd

import (
	"context"
	"strings"
	"testing"
	"time"

	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestQuorumGate: with pd-check-quorum-before-upgrade a PD restart waits,
// transferring no leadership, until the other healthy members are more
// than half of all (peer members count); without it nothing waits.
func TestQuorumGate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		health   []bool
		peers    []bool
		ordinal  int32
		annotate bool
		wait     string
	}{
		{"all healthy restarts", []bool{true, true, true}, nil, 2, true, ""},
		{"another member down waits", []bool{false, true, true}, nil, 2, true, "leave 1 of 3"},
		{"the member itself down may restart", []bool{true, true, false}, nil, 2, true, ""},
		{"five with one down restarts", []bool{false, true, true, true, true}, nil, 4, true, ""},
		{"five with two down waits", []bool{false, false, true, true, true}, nil, 4, true, "leave 2 of 5"},
		{"a down peer member counts", []bool{true, true, true}, []bool{false, false}, 2, true, "leave 2 of 5"},
		{"a single member never keeps a quorum", []bool{true}, nil, 0, true, "leave 0 of 1"},
		{"without the annotation nothing waits", []bool{false, true, true}, nil, 2, false, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tc := membersTC(tt.health, now)
			for i, h := range tt.peers {
				if tc.Status.PD.PeerMembers == nil {
					tc.Status.PD.PeerMembers = map[string]v1alpha1.PDMember{}
				}
				name := "other-pd-" + string(rune('0'+i))
				tc.Status.PD.PeerMembers[name] = v1alpha1.PDMember{Name: name, Health: h}
			}
			tc.Status.PD.Leader = v1alpha1.PDMember{Name: "basic-pd-" + string(rune('0'+tt.ordinal))} // leads: would transfer
			if tt.annotate {
				tc.Annotations = map[string]string{label.AnnPDCheckQuorumBeforeUpgrade: "true"}
			}
			ctl := pdapi.NewFakeControl()
			c := newFailoverPD(ctl, kubefake.NewClientset(), now)
			err := c.PreUpgradePod(context.Background(), tc, tt.ordinal)
			re, waiting := flow.AsRequeue(err)
			writes := ctl.ClusterClient("ns", "basic").WriteCalls()
			if tt.wait != "" {
				if !waiting || !strings.Contains(re.Reason, tt.wait) || !strings.Contains(re.Reason, label.AnnPDCheckQuorumBeforeUpgrade) {
					t.Fatalf("PreUpgradePod = %v, want a wait naming the annotation and %q", err, tt.wait)
				}
				if len(writes) != 0 {
					t.Errorf("a waiting restart wrote to PD: %v", writes)
				}
				return
			}
			if waiting && !strings.Contains(re.Reason, "transferring PD leadership") {
				t.Fatalf("PreUpgradePod = %v, want to go on (a leader transfer at most)", err)
			} else if !waiting && err != nil {
				t.Fatal(err)
			}
		})
	}
}
