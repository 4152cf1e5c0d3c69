package golden

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// Cluster parses a TidbCluster manifest strictly (namespace "ns" when it
// names none) and defaults it, as a sync does before calling any builder.
func Cluster(t *testing.T, manifest string) *v1alpha1.TidbCluster {
	t.Helper()
	tc := &v1alpha1.TidbCluster{}
	if err := yaml.UnmarshalStrict([]byte(manifest), tc); err != nil {
		t.Fatalf("parse cluster: %v", err)
	}
	if tc.Namespace == "" {
		tc.Namespace = "ns"
	}
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

// Objects builds what the skeleton creates for comp on a new cluster, in
// write order (component.Desired), failing the test on a builder error.
func Objects(t *testing.T, tc *v1alpha1.TidbCluster, comp component.Component[*v1alpha1.TidbCluster]) []any {
	t.Helper()
	objs, err := component.Desired(tc, comp)
	if err != nil {
		t.Fatalf("build %s: %v", comp.Name(), err)
	}
	out := make([]any, 0, len(objs))
	for _, o := range objs {
		out = append(out, o)
	}
	return out
}
