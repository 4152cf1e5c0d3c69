//go:build integration

// Package helm tests charts/tidb-operator: `helm lint` and `helm template`
// are clean and render what each mode needs, and — the point of the
// package — the RBAC the chart grants is enough. The chart is installed with
// the cached helm into the local control plane (cluster-scoped and
// namespaced), then the controller-manager runs in this process
// authenticated as the chart's ServiceAccount (a TokenRequest token), with
// the PD/TiKV/TiDB simulator, and must drive examples/basic to Ready. A
// permission the chart forgot makes a write fail and the cluster never
// becomes Ready.
package helm

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// simAddr is where the simulator listens; the operator reaches every PD,
// TiKV and TiDB address through it as HTTP_PROXY. Go's proxy function reads
// the environment once, so it is set before anything makes a request.
var simAddr string

func TestMain(m *testing.M) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "helm tests: no free port:", err)
		os.Exit(1)
	}
	simAddr = ln.Addr().String()
	_ = ln.Close()
	_ = os.Setenv("HTTP_PROXY", "http://"+simAddr)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	framework.Main(m)
}
