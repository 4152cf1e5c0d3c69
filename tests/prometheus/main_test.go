//go:build integration

// Package prometheus scrapes the controller-manager with a real Prometheus
// (Debian's package, installed by hack/install-prometheus.sh when missing):
// the operator runs in this process against the local control plane, a
// Prometheus started on 127.0.0.1 scrapes its /metrics every second, and the
// series users alert on must be queryable with the right labels. promtool
// must find the exposition clean.
package prometheus

import (
	"os"
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func TestMain(m *testing.M) {
	// No simulator here: PD requests fail at once on a dead loopback proxy
	// (the cluster never gets Ready, which does not matter for metrics).
	_ = os.Setenv("HTTP_PROXY", operator.DeadProxy)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	framework.Main(m)
}
