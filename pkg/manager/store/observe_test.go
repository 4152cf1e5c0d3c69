package store

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func TestOwnAddress(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{}
	tc.Name, tc.Namespace = "db", "ns"
	own := (&Lifecycle{kind: testKind}).ownAddress(tc)
	for addr, want := range map[string]bool{
		"db-tiflash-0.db-tiflash-peer.ns.svc:3930":                true,
		"db-tiflash-12.db-tiflash-peer.ns.svc.cluster.local:3930": true,
		"db-tiflash-0.db-tiflash-peer.ns.svc":                     false, // no port
		"db-tiflash-0.db-tiflash-peer.ns.svc.:3930":               false,
		"db-tiflash-x.db-tiflash-peer.ns.svc:3930":                false,
		"db-tiflash-.db-tiflash-peer.ns.svc:3930":                 false,
		"db-tiflash-0.db-tiflash-peer.other.svc:3930":             false,
		"db2-tiflash-0.db2-tiflash-peer.ns.svc:3930":              false,
		"db-tikv-0.db-tikv-peer.ns.svc:20160":                     false,
		"db-tiflash-0.db-tiflash-peer.ns.svcx:3930":               false,
		"db-tiflash-0.db-tiflash-peer.ns.svc:39a0":                false,
	} {
		if got := own.MatchString(addr); got != want {
			t.Errorf("MatchString(%q) = %v, want %v", addr, got, want)
		}
	}
}
