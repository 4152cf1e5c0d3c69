package discovery

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestDiscoveryContainerSecurityContext: spec.discovery.securityContext is
// the discovery container's; the pod keeps its service account token (the
// discovery server reads the TidbCluster with it), whatever
// spec.discovery.automountServiceAccountToken says; the controller names
// a false there as not acted on.
func TestDiscoveryContainerSecurityContext(t *testing.T) {
	t.Parallel()
	no, uid := false, int64(1000)
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{
		PD: &v1alpha1.PDSpec{Replicas: 1},
		Discovery: v1alpha1.DiscoverySpec{ComponentSpec: v1alpha1.ComponentSpec{
			SecurityContext:              &corev1.SecurityContext{RunAsUser: &uid},
			AutomountServiceAccountToken: &no,
		}},
	}}
	tc.Name, tc.Namespace = "basic", "ns"
	pod := newDeployment(tc, "op:v1").Spec.Template.Spec
	sc := pod.Containers[0].SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1000 {
		t.Errorf("discovery container securityContext = %+v, want runAsUser 1000", sc)
	}
	if pod.AutomountServiceAccountToken != nil {
		t.Errorf("discovery pod automountServiceAccountToken = %v, want unset", *pod.AutomountServiceAccountToken)
	}
	*sc.RunAsUser = 1
	if *tc.Spec.Discovery.SecurityContext.RunAsUser != 1000 {
		t.Error("the built container shares the spec's securityContext")
	}

	tc.Spec.Discovery.SecurityContext = nil
	if got := newDeployment(tc, "op:v1").Spec.Template.Spec.Containers[0].SecurityContext; got != nil {
		t.Errorf("without a spec securityContext the container has %+v", got)
	}
}
