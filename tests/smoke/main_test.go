//go:build integration

// Package smoke proves the local control plane is a real one: each test exercises API semantics or a
// controller that a stub API server would not have (watches, conflicts, garbage collection,
// StatefulSet/Job controllers, scheduling onto KWOK nodes, PVC binding).
package smoke

import (
	"testing"

	"github.com/kubetidb/tidb-operator/tests/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
