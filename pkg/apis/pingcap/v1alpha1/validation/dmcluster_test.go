package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

func dmCluster() *v1alpha1.DMCluster {
	return &v1alpha1.DMCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.DMClusterSpec{Version: "v8.5.7",
			Master: v1alpha1.MasterSpec{Replicas: 1, StorageSize: "10Gi"},
			Worker: &v1alpha1.WorkerSpec{Replicas: 1, StorageSize: "100Gi"}},
	}
}

func TestValidateDMCluster(t *testing.T) {
	cases := map[string]struct {
		mutate func(*v1alpha1.DMCluster)
		want   string // "" = valid; else a substring of the errors
	}{
		"v1.6 example":          {func(*v1alpha1.DMCluster) {}, ""},
		"nightly":               {func(dc *v1alpha1.DMCluster) { dc.Spec.Version = "nightly" }, ""},
		"v1 refused":            {func(dc *v1alpha1.DMCluster) { dc.Spec.Version = "v1.0.7" }, "dm cluster version can't set to v1.x.y"},
		"no master storage":     {func(dc *v1alpha1.DMCluster) { dc.Spec.Master.StorageSize = "" }, "storageSize must not be empty"},
		"no storage, 0 masters": {func(dc *v1alpha1.DMCluster) { dc.Spec.Master.StorageSize, dc.Spec.Master.Replicas = "", 0 }, ""},
		"bad size":              {func(dc *v1alpha1.DMCluster) { dc.Spec.Worker.StorageSize = "ten" }, "spec.worker.storageSize"},
		"negative replicas":     {func(dc *v1alpha1.DMCluster) { dc.Spec.Worker.Replicas = -1 }, "spec.worker.replicas"},
		"long name":             {func(dc *v1alpha1.DMCluster) { dc.Name = strings.Repeat("a", 49) }, "metadata.name"},
		"bad delete-slots": {func(dc *v1alpha1.DMCluster) {
			dc.Annotations = map[string]string{"dm-worker.tidb.pingcap.com/delete-slots": "1,2"}
		}, "JSON array"},
		"good delete-slots": {func(dc *v1alpha1.DMCluster) {
			dc.Annotations = map[string]string{"dm-master.tidb.pingcap.com/delete-slots": "[1,2]"}
		}, ""},
		"bad image": {func(dc *v1alpha1.DMCluster) { dc.Spec.Master.BaseImage = "pingcap/dm with space" }, "spec.master.baseImage"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dc := dmCluster()
			c.mutate(dc)
			errs := ValidateDMCluster(dc)
			switch {
			case c.want == "" && len(errs) > 0:
				t.Errorf("want valid, got %v", errs)
			case c.want != "" && !strings.Contains(errs.ToAggregate().Error(), c.want):
				t.Errorf("want an error naming %q, got %v", c.want, errs)
			}
		})
	}
}
