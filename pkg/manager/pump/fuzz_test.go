package pump

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/tests/badinput/fuzzbuild"
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

// FuzzBuild builds Pump's Service, ConfigMap and StatefulSet from every mutated example, corpus or Pump
// seed cluster that is valid after defaulting, and asserts that building never panics, never changes
// the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	fuzzbuild.AddSeeds(f)
	for _, manifest := range pumpSeeds {
		doc, err := yaml.YAMLToJSON([]byte(manifest))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc, uint16(0), "", int64(0))
		for p := uint16(1); p <= 8; p++ {
			f.Add(doc, p*89, "v1 x", int64(1)<<33+int64(p))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64) {
		tc := fuzzbuild.Cluster(doc, sel, s, n)
		if tc == nil || tc.Spec.Pump == nil {
			return
		}
		fuzzbuild.Check(t, tc, buildObjects)
	})
}

// TestFuzzSeedsReachTheBuilders checks that every Pump seed is a valid cluster with Pump as is, so
// that the fuzzer starts inside the builders.
func TestFuzzSeedsReachTheBuilders(t *testing.T) {
	t.Parallel()
	for i, manifest := range pumpSeeds {
		doc, err := yaml.YAMLToJSON([]byte(manifest))
		if err != nil {
			t.Fatal(err)
		}
		tc := fuzzbuild.Cluster(doc, 0, "", 0)
		if tc == nil || tc.Spec.Pump == nil {
			t.Errorf("seed %d is invalid or has no Pump", i)
			continue
		}
		if _, err := buildObjects(tc); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// buildObjects builds Pump's objects as the skeleton would, in write order: the Service, the
// ConfigMap (under its InPlace name) and the StatefulSet mounting it.
func buildObjects(tc *v1alpha1.TidbCluster) ([]metav1.Object, error) {
	var out []metav1.Object
	for _, s := range newServices(tc) {
		out = append(out, s)
	}
	data, err := newConfigData(tc)
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: names.Member(tc.Name, names.Pump), Namespace: tc.Namespace,
			Labels: component.Labels(tc, names.Pump)},
		Data: data,
	}
	sts, err := newStatefulSet(tc, cm.Name)
	if err != nil {
		return nil, err
	}
	return append(out, cm, sts), nil
}
