package ticdc

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/badinput/fuzzbuild"
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
	fuzzbuild.AddSeeds(f)
	for _, manifest := range ticdcSeeds {
		doc, err := yaml.YAMLToJSON([]byte(manifest))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc, uint16(0), "", int64(0))
		for p := uint16(1); p <= 8; p++ {
			f.Add(doc, p*89, "gc-ttl'$", int64(1)<<33+int64(p))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64) {
		tc := fuzzbuild.Cluster(doc, sel, s, n)
		if tc == nil || tc.Spec.TiCDC == nil {
			return
		}
		fuzzbuild.Check(t, tc, buildObjects)
	})
}

// TestFuzzSeedsReachTheBuilders checks that every TiCDC seed is a valid cluster with TiCDC as is, so
// that the fuzzer starts inside the builders.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	for i, manifest := range ticdcSeeds {
		doc, err := yaml.YAMLToJSON([]byte(manifest))
		if err != nil {
			t.Fatal(err)
		}
		tc := fuzzbuild.Cluster(doc, 0, "", 0)
		if tc == nil || tc.Spec.TiCDC == nil {
			t.Errorf("seed %d is invalid or has no TiCDC", i)
			continue
		}
		if _, err := buildObjects(tc); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// buildObjects builds TiCDC's objects as the skeleton would, in write order.
func buildObjects(tc *v1alpha1.TidbCluster) ([]metav1.Object, error) {
	return component.Desired(tc, New(&component.Env{}))
}
