package tikv

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// FuzzBuild builds the Services, ConfigMap and StatefulSet of every
// mutated example or corpus TidbCluster that is valid after defaulting
// (component.Desired, the builders a sync runs) and asserts that building
// never panics, never changes the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	golden.FuzzBuild(f, New(&component.Env{}), nil, "")
}
