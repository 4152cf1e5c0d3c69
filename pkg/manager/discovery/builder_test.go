package discovery

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestDiscoveryContainerSecurityContext: spec.discovery.securityContext is
// the discovery container's.
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
	*sc.RunAsUser = 1
	if *tc.Spec.Discovery.SecurityContext.RunAsUser != 1000 {
		t.Error("the built container shares the spec's securityContext")
	}

	tc.Spec.Discovery.SecurityContext = nil
	if got := newDeployment(tc, "op:v1").Spec.Template.Spec.Containers[0].SecurityContext; got != nil {
		t.Errorf("without a spec securityContext the container has %+v", got)
	}
}

// TestDiscoveryServiceAccountToken: unset leaves the Kubernetes default;
// true is written as is; false opts the pod out of the automatic mount and
// mounts a projected token, the cluster CA and the namespace where
// client-go's in-cluster config reads them, so discovery still reaches the
// API server.
func TestDiscoveryServiceAccountToken(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: 1}}}
	tc.Name, tc.Namespace = "basic", "ns"
	pod := newDeployment(tc, "op:v1").Spec.Template.Spec
	if pod.AutomountServiceAccountToken != nil || len(pod.Volumes) != 0 {
		t.Fatalf("unset: automount %v, volumes %v", pod.AutomountServiceAccountToken, pod.Volumes)
	}
	yes, no := true, false
	tc.Spec.Discovery.AutomountServiceAccountToken = &yes
	pod = newDeployment(tc, "op:v1").Spec.Template.Spec
	if pod.AutomountServiceAccountToken == nil || !*pod.AutomountServiceAccountToken || len(pod.Volumes) != 0 {
		t.Fatalf("true: automount %v, volumes %v", pod.AutomountServiceAccountToken, pod.Volumes)
	}
	tc.Spec.Discovery.AutomountServiceAccountToken = &no
	pod = newDeployment(tc, "op:v1").Spec.Template.Spec
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Fatalf("false: automount %v", pod.AutomountServiceAccountToken)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].Projected == nil {
		t.Fatalf("false: volumes %+v, want one projected volume", pod.Volumes)
	}
	paths := map[string]bool{}
	for _, src := range pod.Volumes[0].Projected.Sources {
		switch {
		case src.ServiceAccountToken != nil:
			paths[src.ServiceAccountToken.Path] = true
		case src.ConfigMap != nil && src.ConfigMap.Name == "kube-root-ca.crt":
			paths[src.ConfigMap.Items[0].Path] = true
		case src.DownwardAPI != nil && src.DownwardAPI.Items[0].FieldRef.FieldPath == "metadata.namespace":
			paths[src.DownwardAPI.Items[0].Path] = true
		}
	}
	if !paths["token"] || !paths["ca.crt"] || !paths["namespace"] {
		t.Errorf("projected files %v, want token, ca.crt, namespace", paths)
	}
	mounts := pod.Containers[0].VolumeMounts
	if len(mounts) != 1 || mounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !mounts[0].ReadOnly {
		t.Errorf("mounts %+v, want the projected volume read-only at the service account path", mounts)
	}
}

// TestDiscoveryProbes: spec.discovery.livenessProbe and readinessProbe are
// TCP probes of the discovery port with their delay and period; unset, the
// container has none (the default layout).
func TestDiscoveryProbes(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{Replicas: 1}}}
	tc.Name, tc.Namespace = "basic", "ns"
	c := newDeployment(tc, "op:v1").Spec.Template.Spec.Containers[0]
	if c.LivenessProbe != nil || c.ReadinessProbe != nil {
		t.Fatalf("unset: liveness %+v, readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	delay, period := int32(30), int32(10)
	tc.Spec.Discovery.LivenessProbe = &v1alpha1.Probe{InitialDelaySeconds: &delay, PeriodSeconds: &period}
	tc.Spec.Discovery.ReadinessProbe = &v1alpha1.Probe{}
	c = newDeployment(tc, "op:v1").Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.TCPSocket == nil || p.TCPSocket.Port.IntValue() != Port {
			t.Fatalf("%s probe %+v, want TCP on %d", name, p, Port)
		}
	}
	if c.LivenessProbe.InitialDelaySeconds != 30 || c.LivenessProbe.PeriodSeconds != 10 {
		t.Errorf("liveness timings %d/%d, want 30/10", c.LivenessProbe.InitialDelaySeconds, c.LivenessProbe.PeriodSeconds)
	}
	if c.ReadinessProbe.InitialDelaySeconds != 0 || c.ReadinessProbe.PeriodSeconds != 0 {
		t.Errorf("readiness timings %d/%d, want the Kubernetes defaults", c.ReadinessProbe.InitialDelaySeconds, c.ReadinessProbe.PeriodSeconds)
	}
}
