package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

func TestClusterFieldsAndVolumeSizes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, wantField string
		mutate          func(*v1alpha1.TidbCluster)
	}{
		{"cluster domain with a space", "spec.clusterDomain", func(tc *v1alpha1.TidbCluster) { tc.Spec.ClusterDomain = "cluster local" }},
		{"cluster domain upper case", "spec.clusterDomain", func(tc *v1alpha1.TidbCluster) { tc.Spec.ClusterDomain = "Cluster.Local" }},
		{"timezone with a space", "spec.timezone", func(tc *v1alpha1.TidbCluster) { tc.Spec.Timezone = "Asia/ Shanghai" }},
		{"absurd volume", "spec.tikv.requests.storage", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiKV.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("999Ei")}
		}},
		{"good domain and zone", "", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.ClusterDomain, tc.Spec.Timezone = "cluster.local", "America/Argentina/Buenos_Aires"
			tc.Spec.TiKV.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Pi")}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := validCluster()
			c.mutate(tc)
			defaulting.SetTidbClusterDefaults(tc)
			errs := ValidateTidbCluster(tc)
			if c.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Field, c.wantField) {
				t.Fatalf("want one error at %s, got %v", c.wantField, errs)
			}
		})
	}
}
