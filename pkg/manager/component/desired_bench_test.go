package component_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/discovery"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/tidb"
	"github.com/kubetidb/tidb-operator/pkg/manager/tiflash"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
)

// benchShape is one shape of the scale bench (tests/bench/testdata).
type benchShape struct {
	name                    string
	pd, tikv, tidb, tiflash int32
}

// pods is how many pods a cluster of the shape runs, discovery included:
// the divisor of the per-pod figures, as in the scale bench.
func (s benchShape) pods() int32 { return s.pd + s.tikv + s.tidb + s.tiflash + 1 }

// benchShapes are the shapes of the scale bench: basic is PD/TiKV/TiDB
// 1/1/1, ha is 3/3/2, tiflash is basic plus one TiFlash store.
var benchShapes = []benchShape{
	{"basic", 1, 1, 1, 0},
	{"ha", 3, 3, 2, 0},
	{"tiflash", 1, 1, 1, 1},
}

func empty() *v1alpha1.Config { return v1alpha1.NewConfig(map[string]any{}) }

// newBenchTC returns a defaulted cluster "db" in namespace "ns" of the given
// shape, with a discovery service, `config: {}` (a ConfigMap each, named by
// its content hash), a ClusterIP TiDB Service and, with TiFlash, one 1Gi
// data disk per store: tests/bench/testdata/<shape>.yaml.
func newBenchTC(s benchShape) *v1alpha1.TidbCluster {
	storage := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	tc := &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "tc-uid"},
		Spec: v1alpha1.TidbClusterSpec{
			Version:              "v8.5.0",
			ConfigUpdateStrategy: v1alpha1.ConfigUpdateStrategyRollingUpdate,
			Discovery:            v1alpha1.DiscoverySpec{},
			PD:                   &v1alpha1.PDSpec{Replicas: s.pd, ResourceRequirements: storage, Config: empty()},
			TiKV:                 &v1alpha1.TiKVSpec{Replicas: s.tikv, ResourceRequirements: storage, Config: empty()},
			TiDB: &v1alpha1.TiDBSpec{Replicas: s.tidb, Config: empty(),
				Service: &v1alpha1.TiDBServiceSpec{ServiceSpec: v1alpha1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}},
		},
	}
	if s.tiflash > 0 {
		tc.Spec.TiFlash = &v1alpha1.TiFlashSpec{Replicas: s.tiflash, Config: empty(),
			StorageClaims: []v1alpha1.StorageClaim{{Resources: storage}}}
	}
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

// BenchmarkDesiredObjects builds every object the operator creates for one
// cluster — the discovery objects and, per component, Services, ConfigMap
// and StatefulSet — with the same builders as a sync (and `render`). A
// sync builds these on every pass, converged or not, so this is the floor
// of a sync's CPU and allocations. A disabled component (TiFlash outside
// the tiflash shape) builds nothing (component.Desired).
func BenchmarkDesiredObjects(b *testing.B) {
	env := &component.Env{}
	comps := []component.Component[*v1alpha1.TidbCluster]{pd.New(env), tiflash.New(env), tikv.New(env), tidb.New(env)}
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			tc := newBenchTC(s)
			b.ReportAllocs()
			objects := 0
			for b.Loop() {
				objs := discovery.Objects(tc, "pingcap/tidb-operator:latest")
				for _, c := range comps {
					more, err := component.Desired(tc, c)
					if err != nil {
						b.Fatal(err)
					}
					objs = append(objs, more...)
				}
				objects = len(objs)
			}
			b.ReportMetric(float64(objects), "objects/op")
		})
	}
}
