package tikv

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
)

// UpStores counts the Up TiKV stores of this cluster and of peer clusters.
func UpStores(tc *v1alpha1.TidbCluster) int { return store.UpStores(&tc.Status.TiKV) }

// Available reports whether TiKV can serve: at least one Up store (peer
// stores count) and at least one Ready TiKV pod. It is the gate TiDB waits
// on, and returns why not when it is not. A cluster without spec.tikv
// (TiDB joining another cluster's TiKV) is always available.
func Available(tc *v1alpha1.TidbCluster) (bool, string) {
	if tc.Spec.TiKV == nil {
		return true, ""
	}
	ready := int32(0)
	if sts := tc.Status.TiKV.StatefulSet; sts != nil {
		ready = sts.ReadyReplicas
	}
	if ready < 1 {
		return false, "waiting for TiKV pods: none Ready"
	}
	if UpStores(tc) < 1 {
		return false, "waiting for TiKV stores: none Up in PD"
	}
	return true, ""
}
