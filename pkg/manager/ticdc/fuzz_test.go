package ticdc

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// ticdcSeeds are clusters with TiCDC, since few examples have one: the golden cases and odd ones (a
// TOML string config, only the flags' items, shell characters in them, sink TLS Secrets, external PDs).
var ticdcSeeds = []string{
	basicCluster,
	configTLSCluster,
	`{metadata: {name: toml}, spec: {version: v6.5.0, pd: {replicas: 1, requests: {storage: 1Gi}},
	  ticdc: {replicas: 2, config: "gc-ttl = 60\n[sorter]\ndir = \"/var/lib/sort\"\n"}}}`,
	`{metadata: {name: flags}, spec: {timezone: Asia/Tokyo, pd: {replicas: 1, requests: {storage: 1Gi}},
	  ticdc: {replicas: 1, config: {log-file: "$(id)'\"", log-level: "` + "`x`" + `", tz: "a b", gc-ttl: 0}}}}`,
	`{metadata: {name: ext}, spec: {pdAddresses: ["https://pd-0.example.com:2379", "https://pd-1.example.com:2379"],
	  tlsCluster: {enabled: true}, clusterDomain: c.local,
	  ticdc: {replicas: 1, tlsClientSecretNames: [a, b], additionalVolumes: [{name: x, emptyDir: {}}],
	    additionalVolumeMounts: [{name: x, mountPath: /x}], storageVolumes: [{name: s, storageSize: 1Gi}]}}}`,
	`{metadata: {name: span}, spec: {acrossK8s: true, preferIPv6: true, cluster: {name: other}, ticdc: {replicas: 1}}}`,
}

// FuzzBuild builds TiCDC's Service, ConfigMap and StatefulSet (component.Desired, the builders a sync
// runs) from every mutated example, corpus or TiCDC seed cluster that is valid after defaulting, and
// asserts that building never panics, never changes the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	golden.FuzzBuild(f, New(&component.Env{}), ticdcSeeds, "gc-ttl'$")
}

// TestFuzzSeedsReachTheBuilders checks that every TiCDC seed is a valid cluster with TiCDC as is, so
// that the fuzzer starts inside the builders.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	golden.SeedsReachBuilders(t, New(&component.Env{}), ticdcSeeds)
}
