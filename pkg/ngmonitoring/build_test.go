package ngmonitoring

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

func newNGM() *v1alpha1.TidbNGMonitoring {
	version := "v8.5.0"
	return &v1alpha1.TidbNGMonitoring{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbNGMonitoringSpec{
			Clusters: []v1alpha1.TidbClusterRef{{Name: "basic"}},
			NGMonitoring: v1alpha1.NGMonitoringSpec{
				ComponentSpec: v1alpha1.ComponentSpec{Version: &version},
				ResourceRequirements: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceStorage: resource.MustParse("1Gi")}},
				RetentionPeriod: "5d",
				Config:          v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "info"}, "address": "1.2.3.4:1"}),
			},
		},
	}
}

func newCluster() *v1alpha1.TidbCluster {
	return &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
}

func TestBuild(t *testing.T) {
	t.Parallel()
	rolling := v1alpha1.ConfigUpdateStrategyRollingUpdate
	cases := map[string]func(*v1alpha1.TidbNGMonitoring, *v1alpha1.TidbCluster){
		"basic": func(*v1alpha1.TidbNGMonitoring, *v1alpha1.TidbCluster) {},
		"tls-rolling-inherited": func(tngm *v1alpha1.TidbNGMonitoring, tc *v1alpha1.TidbCluster) {
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
			tngm.Spec.ClusterDomain = "cluster.local"
			tngm.Spec.ConfigUpdateStrategy = &rolling
			tngm.Spec.NodeSelector = map[string]string{"zone": "a"}
			tngm.Spec.Env = []corev1.EnvVar{{Name: "INHERITED", Value: "1"}}
			tngm.Spec.NGMonitoring.NodeSelector = map[string]string{"disk": "ssd"}
			tngm.Spec.NGMonitoring.Requests = nil
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tngm, tc := newNGM(), newCluster()
			mutate(tngm, tc)
			cm, err := NewConfigMap(tngm, tc)
			if err != nil {
				t.Fatal(err)
			}
			sts, err := NewStatefulSet(tngm, tc, "hash0")
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, name, NewService(tngm), cm, sts)
		})
	}
}

// TestOperatorKeysWin checks that the user's config cannot move the listen
// address, PD endpoints or data directory, and keeps its other keys.
func TestOperatorKeysWin(t *testing.T) {
	t.Parallel()
	cm, err := NewConfigMap(newNGM(), newCluster())
	if err != nil {
		t.Fatal(err)
	}
	cfg := cm.Data[component.ConfigFileKey]
	for _, want := range []string{"address = '0.0.0.0:12020'", "endpoints = ['basic-pd.ns:2379']", "path = '/var/lib/ng-monitoring'", "level = 'info'"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
}

func TestConfigHashOnlyUnderRollingUpdate(t *testing.T) {
	t.Parallel()
	tngm := newNGM()
	sts, err := NewStatefulSet(tngm, newCluster(), "h1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sts.Spec.Template.Annotations[AnnConfigHash]; ok {
		t.Error("InPlace (the default) carries the config hash")
	}
}
