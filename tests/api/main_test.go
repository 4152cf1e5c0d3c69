//go:build integration

// Package api tests the pingcap.com/v1alpha1 CRDs and the controller-manager
// against a real kube-apiserver: the CRDs install with plain kubectl apply,
// TiDB Operator YAML is accepted unchanged, bad objects are rejected with
// clear messages, and the controller-manager leads, syncs and serves metrics.
package api

import (
	"os"
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func TestMain(m *testing.M) {
	_ = os.Setenv("HTTP_PROXY", operator.DeadProxy)
	_ = os.Setenv("NO_PROXY", "127.0.0.1,localhost")
	framework.Main(m)
}
