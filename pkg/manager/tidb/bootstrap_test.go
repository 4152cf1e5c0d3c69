package tidb

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// TestReadLiveFindsTheMountedBootstrapSQL: the name ReadLive reads back
// from a built StatefulSet is the ConfigMap it was built with, and none
// without bootstrap SQL.
func TestReadLiveFindsTheMountedBootstrapSQL(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"init-sql", ""} {
		tc := golden.Cluster(t, basicCluster)
		tc.Spec.TiDB.BootstrapSQLConfigMapName = &name
		sts, err := newStatefulSet(tc, "basic-tidb-1234567")
		if err != nil {
			t.Fatal(err)
		}
		var rec validation.Live
		(&Component{}).ReadLive(sts, &rec)
		if rec.BootstrapSQL != name {
			t.Errorf("read %q from a StatefulSet built with %q", rec.BootstrapSQL, name)
		}
	}
}
