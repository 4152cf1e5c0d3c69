package tidb

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/badinput/fuzzbuild"
)

// FuzzBuild builds the Services, ConfigMap and StatefulSet of every
// mutated example or corpus TidbCluster that is valid after defaulting
// (component.Desired, the builders a sync runs) and asserts that building
// never panics, never changes the cluster and is deterministic.
func FuzzBuild(f *testing.F) {
	fuzzbuild.AddSeeds(f)
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64) {
		tc := fuzzbuild.Cluster(doc, sel, s, n)
		if tc == nil {
			return
		}
		fuzzbuild.Check(t, tc, func(tc *v1alpha1.TidbCluster) ([]metav1.Object, error) {
			return component.Desired(tc, New(&component.Env{}))
		})
	})
}
