package pdms

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// pdmsSeeds are clusters with PD micro-services: the golden cases and an odd one.
var pdmsSeeds = []string{
	msCluster,
	tlsCluster,
	`{metadata: {name: odd}, spec: {startScriptVersion: v2, startScriptV2FeatureFlags: [NoWaitDNS], hostNetwork: true,
	  pd: {mode: ms, replicas: 1, requests: {storage: 1Gi}},
	  pdms: [{name: tso, replicas: 3, config: "[log]\nlevel = 'info'"}, {name: scheduling, replicas: 0}]}}`,
}

// FuzzBuild builds tso's Services, ConfigMap and StatefulSet (component.Desired) from every mutated seed
// that is valid after defaulting, and asserts that building never panics, never changes the cluster and
// is deterministic.
func FuzzBuild(f *testing.F) {
	golden.FuzzBuild(f, NewTSO(&component.Env{}), pdmsSeeds, "v1 x")
}

// TestFuzzSeedsReachTheBuilders checks that every seed is a valid cluster running tso as is.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	golden.SeedsReachBuilders(t, NewTSO(&component.Env{}), pdmsSeeds)
}
