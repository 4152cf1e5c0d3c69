package component_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
)

// sysctlCluster runs every component with the sysctls of the TiDB
// Operator's cloud examples; annotate adds tidb.pingcap.com/sysctl-init.
func sysctlCluster(t *testing.T, annotate bool) *v1alpha1.TidbCluster {
	ann := ""
	if annotate {
		ann = "  annotations:\n    tidb.pingcap.com/sysctl-init: \"true\"\n"
	}
	return golden.Cluster(t, `
metadata: {name: basic}
spec:
  version: v8.5.0
  helper: {image: alpine:3.20}
`+ann+`  podSecurityContext:
    sysctls:
    - {name: net.core.somaxconn, value: "32768"}
    - {name: net.ipv4.tcp_keepalive_time, value: "300"}
  pd: {replicas: 1, requests: {storage: 1Gi, cpu: "1"}, limits: {memory: 2Gi}}
  tikv: {replicas: 1, requests: {storage: 1Gi, cpu: "2"}}
  tidb: {replicas: 1, requests: {cpu: 500m}}
  tiflash: {replicas: 1, storageClaims: [{resources: {requests: {storage: 1Gi}}}]}
  ticdc: {replicas: 1}
  pump: {replicas: 1, requests: {storage: 1Gi}}
  tiproxy: {replicas: 1}
`)
}

// statefulSets builds every component's StatefulSet of tc, by component.
func statefulSets(t *testing.T, tc *v1alpha1.TidbCluster) map[string]*appsv1.StatefulSet {
	t.Helper()
	out := map[string]*appsv1.StatefulSet{}
	for _, comp := range members.Components(members.New(&component.Env{})) {
		for _, o := range golden.Objects(t, tc, comp) {
			if sts, ok := o.(*appsv1.StatefulSet); ok {
				out[comp.Name()] = sts
			}
		}
	}
	return out
}

// v16SysctlInit is the init container the TiDB Operator v1.6 builds for
// these sysctls, written out field by field.
func v16SysctlInit(name string, res corev1.ResourceRequirements) corev1.Container {
	privileged := true
	return corev1.Container{
		Name:            name,
		Image:           "alpine:3.20",
		Command:         []string{"sh", "-c", "sysctl -w net.core.somaxconn=32768 net.ipv4.tcp_keepalive_time=300"},
		SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
		Resources:       res,
	}
}

// TestSysctlInitMovesSysctlsIntoAnInitContainer checks that with the
// annotation PD, TiKV, TiDB and TiFlash set the sysctls in a privileged
// init container of the main container's resources and keep them off the
// pod, as v1.6 does, while TiCDC, Pump and TiProxy, which v1.6 gives no
// such container, keep them on the pod.
func TestSysctlInitMovesSysctlsIntoAnInitContainer(t *testing.T) {
	t.Parallel()
	sets := statefulSets(t, sysctlCluster(t, true))
	resources := map[string]corev1.ResourceRequirements{
		"pd": {Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}},
		"tikv": {Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
		"tidb": {Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
	}
	for _, comp := range []string{"pd", "tikv", "tidb", "tiflash"} {
		t.Run(comp, func(t *testing.T) {
			t.Parallel()
			if sets[comp] == nil {
				t.Fatalf("no StatefulSet built")
			}
			pod := sets[comp].Spec.Template.Spec
			name := "init"
			if comp == "tiflash" {
				name = "sysctl-init"
			}
			if len(pod.InitContainers) == 0 {
				t.Fatalf("no init container")
			}
			if diff := cmp.Diff(v16SysctlInit(name, resources[comp]), pod.InitContainers[0]); diff != "" {
				t.Errorf("sysctl init container (-want +got):\n%s", diff)
			}
			if pod.SecurityContext == nil || len(pod.SecurityContext.Sysctls) != 0 {
				t.Errorf("pod security context %+v, want one without sysctls", pod.SecurityContext)
			}
			if comp == "tiflash" && (len(pod.InitContainers) != 2 || pod.InitContainers[1].Name != "init") {
				t.Errorf("TiFlash's config renderer must follow the sysctls: %d init containers", len(pod.InitContainers))
			}
		})
	}
	for _, comp := range []string{"ticdc", "pump", "tiproxy"} {
		pod := sets[comp].Spec.Template.Spec
		if len(pod.InitContainers) != 0 || pod.SecurityContext == nil || len(pod.SecurityContext.Sysctls) != 2 {
			t.Errorf("%s: %d init containers, security context %+v; want the sysctls on the pod", comp, len(pod.InitContainers), pod.SecurityContext)
		}
	}
}

// TestSysctlsStayOnThePodWithoutTheAnnotation checks the layout without
// the annotation: no component gets the container, every pod the sysctls.
func TestSysctlsStayOnThePodWithoutTheAnnotation(t *testing.T) {
	t.Parallel()
	for comp, sts := range statefulSets(t, sysctlCluster(t, false)) {
		pod := sts.Spec.Template.Spec
		for _, c := range pod.InitContainers {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				t.Errorf("%s: privileged init container %s without the annotation", comp, c.Name)
			}
		}
		if pod.SecurityContext == nil || len(pod.SecurityContext.Sysctls) != 2 {
			t.Errorf("%s: security context %+v, want the 2 sysctls", comp, pod.SecurityContext)
		}
	}
}
