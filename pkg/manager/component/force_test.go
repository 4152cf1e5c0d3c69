package component

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// TestForceIfOldDownYieldsToTheSafetyGates: force-upgrade turns on the
// generic force only while neither upgrade safety gate is asked for.
func TestForceIfOldDownYieldsToTheSafetyGates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ann  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{label.AnnForceUpgradeKey: "true"}, true},
		{map[string]string{label.AnnForceUpgradeKey: "false"}, false},
		{map[string]string{label.AnnForceUpgradeKey: "true", label.AnnPDCheckQuorumBeforeUpgrade: "true"}, false},
		{map[string]string{label.AnnForceUpgradeKey: "true", label.AnnTiKVCheckAllStoresUpBeforeUpgrade: "true"}, false},
	} {
		tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Annotations: c.ann}}
		if got := forceIfOldDownAsked(tc); got != c.want {
			t.Errorf("annotations %v: forceIfOldDownAsked %v, want %v", c.ann, got, c.want)
		}
	}
}
