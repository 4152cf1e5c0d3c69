package tikv

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// allStoresUpGate is why no TiKV pod may restart now under the TidbCluster
// annotation tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade:
// "true" (spec §6.2), or "" when they may: every store PD lists for the
// cluster — TiKV and TiFlash, this cluster's and its peers', as last
// observed — must be Up (Tombstone stores are listed apart and do not
// count). Without the annotation it is always "".
func allStoresUpGate(tc *v1alpha1.TidbCluster) string {
	if tc.Annotations[label.AnnTiKVCheckAllStoresUpBeforeUpgrade] != "true" {
		return ""
	}
	for _, stores := range []map[string]v1alpha1.TiKVStore{tc.Status.TiKV.Stores, tc.Status.TiKV.PeerStores,
		tc.Status.TiFlash.Stores, tc.Status.TiFlash.PeerStores} {
		for _, id := range slices.Sorted(maps.Keys(stores)) {
			if s := stores[id]; s.State != pdapi.StoreStateNameUp && s.State != pdapi.StoreStateNameTombstone {
				return fmt.Sprintf("%s: store %s (%s) is %s, not Up", label.AnnTiKVCheckAllStoresUpBeforeUpgrade, id, s.PodName, s.State)
			}
		}
	}
	return ""
}
