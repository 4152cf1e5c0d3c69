//go:build bench

package main

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// V1Minimum is the fewest API requests the TiDB Operator v1.6 needs to
// bring one cluster of a shape to Ready: every object of its object set
// created once, every meta label it must patch once, and one status write
// (/work/shared/spec/tidb-operator-v1.md §3, §3.4 and step 14). Reads,
// Events and retries are left out, so no operator that keeps v1's objects
// and labels can go below it.
type V1Minimum struct {
	Objects      int `json:"objects"`
	MetaPatches  int `json:"metaPatches"`
	StatusWrites int `json:"statusWrites"`
}

// Total is the minimum number of requests.
func (m V1Minimum) Total() int { return m.Objects + m.MetaPatches + m.StatusWrites }

// String shows the sum, e.g. "23 = 16+6+1".
func (m V1Minimum) String() string {
	return fmt.Sprintf("%d = %d+%d+%d", m.Total(), m.Objects, m.MetaPatches, m.StatusWrites)
}

// v1Minimum counts V1Minimum from a shape's components and replicas.
//
// Objects (v1 §3.4): discovery's Role, ServiceAccount, RoleBinding,
// Deployment and Service (5, whenever spec.pd is set); PD's client and
// peer Services, ConfigMap and StatefulSet (4); TiKV's peer Service,
// ConfigMap and StatefulSet (3); TiDB's peer Service, client Service (only
// with spec.tidb.service), ConfigMap and StatefulSet (4); TiFlash's peer
// Service, ConfigMap (always generated) and StatefulSet (3); TiCDC's peer
// Service, ConfigMap and StatefulSet (3). The PD, TiKV, TiDB and TiCDC
// ConfigMaps exist only with a config section (every bench shape has one).
//
// Meta patches (v1 step 14): the member-id or store-id (with cluster-id)
// labels exist only once a member runs, so each PD, TiKV and TiFlash pod is
// patched once, and so is each of its PVCs and the PV behind it: 1 + 2 per
// claim (PD and TiKV have one claim, TiFlash one per storageClaims entry).
// TiDB and TiCDC pods have no ID and no claim. 1/1/1: 16 objects, 6
// patches (PD's and TiKV's pod, PVC, PV), 1 status write = 23.
func v1Minimum(tc *v1alpha1.TidbCluster) V1Minimum {
	m := V1Minimum{StatusWrites: 1}
	s := tc.Spec
	stateful := func(replicas int32, claims int) { m.MetaPatches += int(replicas) * (1 + 2*claims) }
	if s.PD != nil {
		m.Objects += 5 + 3 + configMap(s.PD.Config != nil)
		stateful(s.PD.Replicas, 1)
	}
	if s.TiKV != nil {
		m.Objects += 2 + configMap(s.TiKV.Config != nil)
		stateful(s.TiKV.Replicas, 1)
	}
	if s.TiDB != nil {
		m.Objects += 2 + configMap(s.TiDB.Config != nil)
		if s.TiDB.Service != nil {
			m.Objects++
		}
	}
	if s.TiFlash != nil {
		m.Objects += 3
		stateful(s.TiFlash.Replicas, max(len(s.TiFlash.StorageClaims), 1))
	}
	if s.TiCDC != nil {
		m.Objects += 2 + configMap(s.TiCDC.Config != nil)
	}
	return m
}

func configMap(has bool) int {
	if has {
		return 1
	}
	return 0
}
