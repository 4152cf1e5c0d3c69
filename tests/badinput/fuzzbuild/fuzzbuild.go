// Package fuzzbuild is the shared body of the builder fuzz targets in
// pkg/manager/{pd,tikv,tidb,discovery}: it turns fuzzed bytes into a
// defaulted, valid TidbCluster (as a sync would hand to the builders) and
// checks that building from it never panics, never changes the cluster and
// gives the same objects twice. It is test support only.
package fuzzbuild

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
)

// AddSeeds adds every TidbCluster of examples/ and of the corpus, as is and
// with a few structural pokes (corpus.Poke), as (doc, sel, s, n) seeds.
func AddSeeds(f *testing.F) {
	f.Helper()
	seeds, err := corpus.Seeds("TidbCluster")
	if err != nil {
		f.Fatal(err)
	}
	for i, doc := range seeds {
		f.Add(doc, uint16(0), "", int64(0))
		for p := uint16(1); p <= 6; p++ {
			f.Add(doc, uint16(i)*31+p*97, "x y", int64(1)<<40+int64(p))
		}
	}
}

// Cluster reads data (poked by sel, s, n) as a TidbCluster named "fuzz" in
// namespace "ns" unless it names its own, defaults it and returns it when
// it is valid; nil when it cannot be read or validation rejects it (a sync
// stops there, so the builders never see it).
func Cluster(data []byte, sel uint16, s string, n int64) *v1alpha1.TidbCluster {
	tc := &v1alpha1.TidbCluster{}
	if json.Unmarshal(corpus.Poke(data, sel, s, n), tc) != nil || tc.DecodeError != nil || !reflect.DeepEqual(tc, tc) {
		return nil
	}
	if tc.Name == "" {
		tc.Name = "fuzz"
	}
	if tc.Namespace == "" {
		tc.Namespace = "ns"
	}
	defaulting.SetTidbClusterDefaults(tc)
	if len(validation.ValidateTidbCluster(tc)) > 0 {
		return nil
	}
	return tc
}

// Check builds tc with build twice (the second time from a copy) and fails
// t when building changed tc, the two results differ, or an object is
// unnamed or outside tc's namespace. A build error is allowed (it fails the
// sync with a cause) as long as it is the same both times.
func Check(t *testing.T, tc *v1alpha1.TidbCluster, build func(*v1alpha1.TidbCluster) ([]metav1.Object, error)) {
	t.Helper()
	before := tc.DeepCopy()
	objs, err := build(tc)
	if !equality.Semantic.DeepEqual(before, tc) {
		t.Fatalf("building changed the TidbCluster:\n%s", cmp.Diff(before, tc))
	}
	again, errAgain := build(tc.DeepCopy())
	if fmt.Sprint(err) != fmt.Sprint(errAgain) {
		t.Fatalf("building twice gave different errors: %v / %v", err, errAgain)
	}
	if !equality.Semantic.DeepEqual(objs, again) {
		t.Fatalf("building twice gave different objects:\n%s", cmp.Diff(objs, again))
	}
	for _, o := range objs {
		if o.GetName() == "" || o.GetNamespace() != tc.Namespace {
			t.Fatalf("built %T %q in namespace %q, want a name and namespace %q", o, o.GetName(), o.GetNamespace(), tc.Namespace)
		}
		if !strings.HasPrefix(o.GetName(), tc.Name) {
			t.Fatalf("built %T %q does not begin with the cluster name %q", o, o.GetName(), tc.Name)
		}
	}
}
