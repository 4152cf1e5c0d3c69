//go:build integration

// Package api tests the pingcap.com/v1alpha1 CRDs and the controller-manager
// against a real kube-apiserver: the CRDs install with plain kubectl apply,
// TiDB Operator YAML is accepted unchanged, bad objects are rejected with
// clear messages, and the controller-manager leads, syncs and serves metrics.
package api

import (
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
