package golden

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/badinput/fuzzbuild"
)

// FuzzBuild is a component's build fuzz target: it builds comp's objects
// (component.Desired, the builders a sync runs) from every mutated example,
// corpus or seed cluster that is valid after defaulting and enables comp,
// and asserts that building never panics, never changes the cluster and is
// deterministic (fuzzbuild.Check). seeds are YAML manifests of clusters
// with comp, since few examples have one; each is added as is and with
// eight mutations that pair it with the string mutation.
func FuzzBuild(f *testing.F, comp component.Component[*v1alpha1.TidbCluster], seeds []string, mutation string) {
	f.Helper()
	fuzzbuild.AddSeeds(f)
	for _, manifest := range seeds {
		doc := seedJSON(f, manifest)
		f.Add(doc, uint16(0), "", int64(0))
		for p := uint16(1); p <= 8; p++ {
			f.Add(doc, p*89, mutation, int64(1)<<33+int64(p))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64) {
		tc := fuzzbuild.Cluster(doc, sel, s, n)
		if tc == nil || !comp.Enabled(tc) {
			return
		}
		fuzzbuild.Check(t, tc, desired(comp))
	})
}

// SeedsReachBuilders checks that every seed of FuzzBuild is, as is, a valid
// cluster that enables comp and builds without error, so that the fuzzer
// starts inside comp's builders.
func SeedsReachBuilders(t *testing.T, comp component.Component[*v1alpha1.TidbCluster], seeds []string) {
	t.Helper()
	for i, manifest := range seeds {
		tc := fuzzbuild.Cluster(seedJSON(t, manifest), 0, "", 0)
		if tc == nil || !comp.Enabled(tc) {
			t.Errorf("seed %d is invalid or has no %s", i, comp.Name())
			continue
		}
		if _, err := desired(comp)(tc); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// desired builds comp's objects as the skeleton would, in write order.
func desired(comp component.Component[*v1alpha1.TidbCluster]) func(*v1alpha1.TidbCluster) ([]metav1.Object, error) {
	return func(tc *v1alpha1.TidbCluster) ([]metav1.Object, error) {
		return component.Desired(tc, comp)
	}
}

// seedJSON converts a seed manifest to the JSON the fuzz target reads.
func seedJSON(tb testing.TB, manifest string) []byte {
	tb.Helper()
	doc, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		tb.Fatal(err)
	}
	return doc
}
