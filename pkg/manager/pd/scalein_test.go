package pd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestPreScaleInNeverLeavesPDWithoutALeaderCandidate: the member scaled in
// is deleted from PD only when that keeps a quorum of healthy members and
// it does not lead; a leader first hands leadership to a healthy member of
// this cluster, and with none (only a peer cluster's members are healthy,
// or no one else is) the scale-in waits, naming why, without a PD write.
func TestPreScaleInNeverLeavesPDWithoutALeaderCandidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		health     []bool
		peers      []bool
		ordinal    int32 // the last member's when 0
		leader     string
		wantWrites string
		wantWait   string // part of the wait's reason; "" for nil
	}{
		{name: "member", health: []bool{true, true, true}, leader: "basic-pd-0", wantWrites: "[DeleteMember:basic-pd-2]"},
		{name: "leader hands over first", health: []bool{true, true, true}, leader: "basic-pd-2",
			wantWrites: "[TransferPDLeader:basic-pd-0]", wantWait: "transferring PD leadership"},
		{name: "leader with only peer candidates", health: []bool{false, false, true}, peers: []bool{true, true, true}, leader: "basic-pd-2",
			wantWrites: "[]", wantWait: "no other healthy PD member of this cluster"},
		{name: "leader with no healthy candidate", health: []bool{false, true}, leader: "basic-pd-1",
			wantWrites: "[]", wantWait: "no quorum"},
		{name: "healthy member whose removal loses the quorum", health: []bool{false, true, true}, leader: "basic-pd-1",
			wantWrites: "[]", wantWait: "no quorum"},
		{name: "unhealthy member leaves", health: []bool{true, true, false}, leader: "basic-pd-0", wantWrites: "[DeleteMember:basic-pd-2]"},
		// PD lists no member of basic-pd-2: the delete by name is a no-op there.
		{name: "unlisted member", health: []bool{true, true}, ordinal: 2, leader: "basic-pd-0", wantWrites: "[DeleteMember:basic-pd-2]"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctl := pdapi.NewFakeControl()
			c := newFailoverPD(ctl, nil, transferNow)
			tc := membersTC(tt.health, transferNow)
			tc.Status.PD.PeerMembers = peerMembers(tt.peers)
			tc.Status.PD.Leader = v1alpha1.PDMember{Name: tt.leader}
			ordinal := int32(len(tt.health) - 1)
			if tt.ordinal != 0 {
				ordinal = tt.ordinal
			}
			err := c.PreScaleIn(context.Background(), tc, ordinal)
			re, waiting := flow.AsRequeue(err)
			switch {
			case tt.wantWait == "" && err != nil:
				t.Fatalf("PreScaleIn = %v, want nil", err)
			case tt.wantWait != "" && (!waiting || !strings.Contains(re.Reason, tt.wantWait)):
				t.Fatalf("PreScaleIn = %v, want a wait naming %q", err, tt.wantWait)
			}
			if got := fmt.Sprint(pdWrites(ctl)); got != tt.wantWrites {
				t.Fatalf("PD writes %s, want %s", got, tt.wantWrites)
			}
		})
	}
}
