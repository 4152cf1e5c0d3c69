package tiproxy

import (
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// tiproxySeeds are clusters with TiProxy, since few examples have one: the
// golden cases and odd ones (both certificate layouts with every TLS
// switch, TOML and table configs over the operator's keys, external PDs).
var tiproxySeeds = []string{
	basicCluster,
	tlsLegacyCluster,
	tlsV1Cluster,
	storageCluster,
	`{metadata: {name: ext}, spec: {pdAddresses: ["https://pd.example.com:2379"], tlsCluster: {enabled: true},
	  tidb: {replicas: 1, tlsClient: {enabled: true, skipInternalClientCA: true}},
	  tiproxy: {replicas: 2, config: "[security.sql-tls]\nskip-ca = false\n[proxy]\npd-addrs = 'x:1'"}}}`,
	`{metadata: {name: ref, namespace: b}, spec: {cluster: {name: a, namespace: c, clusterDomain: d.local}, clusterDomain: e.local,
	  tiproxy: {replicas: 1, certLayout: v1, sslEnableTiDB: true, tlsClientSecretName: mine,
	    readinessProbe: {type: command}, config: {workdir: /tmp, api: {addr: "0.0.0.0:1"}}}}}`,
}

// FuzzBuild builds TiProxy's Services, ConfigMap and StatefulSet (component.Desired, the builders a sync
// runs) from every mutated example, corpus or TiProxy seed cluster that is valid after defaulting, and
// asserts that building never panics, never changes the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	golden.FuzzBuild(f, New(&component.Env{}), tiproxySeeds, "v1 x")
}

// TestFuzzSeedsReachTheBuilders checks that every TiProxy seed is a valid cluster with TiProxy as is, so
// that the fuzzer starts inside the builders.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	golden.SeedsReachBuilders(t, New(&component.Env{}), tiproxySeeds)
}
