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
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
)

// benchShapes are the shapes of the scale bench (tests/bench/testdata):
// basic is PD/TiKV/TiDB 1/1/1, ha is 3/3/2.
var benchShapes = []struct {
	name           string
	pd, tikv, tidb int32
}{
	{"basic", 1, 1, 1},
	{"ha", 3, 3, 2},
}

func empty() *v1alpha1.Config { return v1alpha1.NewConfig(map[string]any{}) }

// newBenchTC returns a defaulted cluster "db" in namespace "ns" of the given
// shape, with a discovery service, `config: {}` (a ConfigMap each, named by
// its content hash) and a ClusterIP TiDB Service: tests/bench/testdata/<shape>.yaml.
func newBenchTC(pdReplicas, tikvReplicas, tidbReplicas int32) *v1alpha1.TidbCluster {
	storage := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	tc := &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "tc-uid"},
		Spec: v1alpha1.TidbClusterSpec{
			Version:              "v8.5.0",
			ConfigUpdateStrategy: v1alpha1.ConfigUpdateStrategyRollingUpdate,
			Discovery:            v1alpha1.DiscoverySpec{},
			PD:                   &v1alpha1.PDSpec{Replicas: pdReplicas, ResourceRequirements: storage, Config: empty()},
			TiKV:                 &v1alpha1.TiKVSpec{Replicas: tikvReplicas, ResourceRequirements: storage, Config: empty()},
			TiDB: &v1alpha1.TiDBSpec{Replicas: tidbReplicas, Config: empty(),
				Service: &v1alpha1.TiDBServiceSpec{ServiceSpec: v1alpha1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}},
		},
	}
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

// BenchmarkDesiredObjects builds every object the operator creates for one
// cluster — the discovery objects and, per component, Services, ConfigMap
// and StatefulSet — with the same builders as a sync (and `render`). A
// sync builds these on every pass, converged or not, so this is the floor
// of a sync's CPU and allocations.
func BenchmarkDesiredObjects(b *testing.B) {
	env := &component.Env{}
	comps := []component.Component{pd.New(env), tikv.New(env), tidb.New(env)}
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			tc := newBenchTC(s.pd, s.tikv, s.tidb)
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
