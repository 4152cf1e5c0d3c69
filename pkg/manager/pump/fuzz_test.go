package pump

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// pumpSeeds are clusters with Pump, since few examples have one: the golden cases and odd ones (TOML
// and table configs over the operator's keys, external PDs, host network, every pod setting).
var pumpSeeds = []string{
	basicCluster,
	tlsCluster,
	podSettingsCluster,
	`{metadata: {name: ext}, spec: {pdAddresses: ["https://pd.example.com:2379"], tlsCluster: {enabled: true},
	  pump: {replicas: 2, requests: {storage: 1Gi}, config: "log-level = 'debug'\n[security]\nssl-ca = 'x'"}}}`,
	`{metadata: {name: ref, namespace: b}, spec: {cluster: {name: a, namespace: c, clusterDomain: d.local}, clusterDomain: e.local,
	  acrossK8s: true, timezone: Europe/Paris,
	  pump: {replicas: 1, setTimeZone: true, requests: {storage: 1Gi}, env: [{name: GODEBUG, value: x}],
	    config: {storage: {stop-write-at-available-space: 1}, node-id: "x:1"}}}}`,
}

// FuzzBuild builds Pump's Service, ConfigMap and StatefulSet (component.Desired, the builders a sync
// runs) from every mutated example, corpus or Pump seed cluster that is valid after defaulting, and
// asserts that building never panics, never changes the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	golden.FuzzBuild(f, New(&component.Env{}), pumpSeeds, "v1 x")
}

// TestFuzzSeedsReachTheBuilders checks that every Pump seed is a valid cluster with Pump as is, so
// that the fuzzer starts inside the builders.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	golden.SeedsReachBuilders(t, New(&component.Env{}), pumpSeeds)
}
