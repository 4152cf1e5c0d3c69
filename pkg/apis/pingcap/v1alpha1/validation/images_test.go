package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
)

// TestSpecStrings covers the cluster fields, images, versions, resources,
// config sections and log volumes the spec can get wrong.
func TestSpecStrings(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	cases := []struct {
		name, wantField string
		mutate          func(*v1alpha1.TidbCluster)
	}{
		{"absurd image", "spec.pd.baseImage", func(tc *v1alpha1.TidbCluster) { tc.Spec.PD.BaseImage = "::::////@@@@" }},
		{"huge image", "spec.tidb.baseImage", func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.BaseImage = strings.Repeat("a", 5000) }},
		{"garbage version", "spec.version", func(tc *v1alpha1.TidbCluster) { tc.Spec.Version = "latest-and-greatest!!" }},
		{"zero-width version", "spec.tikv.version", func(tc *v1alpha1.TidbCluster) { tc.Spec.TiKV.Version = str("v8.5.0\u200b") }},
		{"absurd memory", "spec.tikv.limits[memory]", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiKV.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("999999Ei")}
		}},
		{"scalar storage section", "spec.tikv.config.storage", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiKV.Config = v1alpha1.NewConfig(map[string]any{"storage": "big"})
		}},
		{"scalar log section", "spec.tidb.config.log", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiDB.Config = v1alpha1.NewConfig(map[string]any{"log": "verbose"})
		}},
		{"ghost slow log volume", "spec.tidb.slowLogVolumeName", func(tc *v1alpha1.TidbCluster) { tc.Spec.TiDB.SlowLogVolumeName = "ghost" }},
		{"ghost RocksDB log volume", "spec.tikv.rocksDBLogVolumeName", func(tc *v1alpha1.TidbCluster) {
			on := true
			tc.Spec.TiKV.SeparateRocksDBLog, tc.Spec.TiKV.RocksDBLogVolumeName = &on, "ghost"
		}},
		{"cluster domain with a space", "spec.clusterDomain", func(tc *v1alpha1.TidbCluster) { tc.Spec.ClusterDomain = "cluster local" }},
		{"cluster domain upper case", "spec.clusterDomain", func(tc *v1alpha1.TidbCluster) { tc.Spec.ClusterDomain = "Cluster.Local" }},
		{"timezone with a space", "spec.timezone", func(tc *v1alpha1.TidbCluster) { tc.Spec.Timezone = "Asia/ Shanghai" }},
		{"absurd volume", "spec.tikv.requests.storage", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TiKV.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("999Ei")}
		}},
		{"good references", "", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.ClusterDomain, tc.Spec.Timezone = "cluster.local", "America/Argentina/Buenos_Aires"
			tc.Spec.TiKV.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Pi")}
			tc.Spec.PD.BaseImage = "registry.example:5000/pingcap/pd"
			tc.Spec.TiKV.BaseImage = "pingcap/tikv@sha256:" + strings.Repeat("ab", 32)
			tc.Spec.TiDB.Version = str("v8.5.0-nightly_1")
			tc.Spec.TiKV.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Gi"), corev1.ResourceCPU: resource.MustParse("64")}
			tc.Spec.TiKV.Config = v1alpha1.NewConfig(map[string]any{"storage": map[string]any{"reserve-space": "0MB"}})
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
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Field, c.wantField) {
				t.Fatalf("want an error at %s, got %v", c.wantField, errs)
			}
		})
	}
}
