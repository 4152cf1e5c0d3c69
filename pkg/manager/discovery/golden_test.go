package discovery

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
)

// TestTidbClusterObjectsGolden pins the TidbCluster discovery objects, so
// sharing builders with the DMCluster variant cannot change them.
func TestTidbClusterObjectsGolden(t *testing.T) {
	t.Parallel()
	no, delay := false, int32(5)
	cases := map[string]func(*v1alpha1.TidbCluster){
		"tc-default": func(*v1alpha1.TidbCluster) {},
		"tc-tls-mtls-probes-token": func(tc *v1alpha1.TidbCluster) {
			tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true, EnableDiscoveryMTLS: true}
			tc.Spec.Timezone = "Asia/Shanghai"
			tc.Spec.Discovery.AutomountServiceAccountToken = &no
			tc.Spec.Discovery.LivenessProbe = &v1alpha1.Probe{InitialDelaySeconds: &delay}
			tc.Spec.Discovery.ReadinessProbe = &v1alpha1.Probe{PeriodSeconds: &delay}
			tc.Spec.Discovery.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			tc.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: 3}}}
			tc.Name, tc.Namespace = "basic", "ns"
			mutate(tc)
			var objs []any
			for _, o := range Objects(tc, "pingcap/tidb-operator:v1") {
				objs = append(objs, o)
			}
			golden.Assert(t, name, objs...)
		})
	}
}
