//go:build integration

// Package prometheus scrapes the controller-manager with a real Prometheus
// (Debian's package, installed by hack/install-prometheus.sh when missing):
// the operator runs in this process against the local control plane, a
// Prometheus started on 127.0.0.1 scrapes its /metrics every second, and the
// series users alert on must be queryable with the right labels. promtool
// must find the exposition clean.
package prometheus

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

// simAddr is a free loopback port chosen before anything makes a request:
// the operator's HTTP clients read HTTP_PROXY once. Tests that need the
// simulator start it there (monitor_test.go); for the others nothing
// listens, so PD requests fail at once (the cluster never gets Ready, which
// does not matter for metrics).
var simAddr string

func TestMain(m *testing.M) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "prometheus: no free port:", err)
		os.Exit(1)
	}
	simAddr = ln.Addr().String()
	_ = ln.Close()
	_ = os.Setenv("HTTP_PROXY", "http://"+simAddr)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	framework.Main(m)
}
