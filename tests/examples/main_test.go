//go:build integration

// Package examples checks every manifest under examples/: the API server
// accepts it with strict field validation and keeps every field (nothing
// pruned), `tidb-controller-manager render` accepts every TidbCluster in it,
// and the pause example is honoured by a running operator.
package examples

import (
	"os"
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func TestMain(m *testing.M) {
	// The operator run by TestPausedExampleCreatesNothing must not resolve
	// cluster names through the machine's DNS; Go reads this once.
	_ = os.Setenv("HTTP_PROXY", operator.DeadProxy)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	framework.Main(m)
}
