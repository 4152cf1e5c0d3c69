package pd

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// quorumGate is why member must not restart now under the TidbCluster
// annotation tidb.pingcap.com/pd-check-quorum-before-upgrade: "true" (spec
// §6.2, the TiDB Operator's IsPDStable), or "" when it may: the healthy
// members of the PD cluster (this cluster's and its peers', from the last
// observation) other than member must still be more than half of all
// members. Without the annotation it is always "". A single-member PD can
// never keep its quorum through a restart, so with the annotation it waits
// until the annotation goes (or a forced upgrade restarts it).
func quorumGate(tc *v1alpha1.TidbCluster, member string) string {
	if tc.Annotations[label.AnnPDCheckQuorumBeforeUpgrade] != "true" {
		return ""
	}
	total, healthy := 0, 0
	for _, members := range []map[string]v1alpha1.PDMember{tc.Status.PD.Members, tc.Status.PD.PeerMembers} {
		for name, m := range members {
			total++
			if m.Health && name != member {
				healthy++
			}
		}
	}
	if healthy > total/2 {
		return ""
	}
	return fmt.Sprintf("%s: restarting %s would leave %d of %d PD members healthy, not a quorum",
		label.AnnPDCheckQuorumBeforeUpgrade, member, healthy, total)
}
