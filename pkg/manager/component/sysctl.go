package component

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

const (
	// SysctlInitContainer is the name the TiDB Operator gives the init
	// container that sets a pod's sysctls (PD, TiKV, TiDB); TiFlash, whose
	// "init" renders its config, names its own.
	SysctlInitContainer = "init"
	// defaultHelperImage is the helper image when spec.helper.image is unset.
	defaultHelperImage = "busybox:1.26.2"
)

// sysctlInit returns the init container that sets the pod's sysctls and
// the pod security context without them, when the pod annotation
// tidb.pingcap.com/sysctl-init is "true", the pod security context lists
// sysctls and the component has such a container (name != ""); otherwise
// nil and the context unchanged. Because kubelet refuses a pod whose
// unsafe sysctls it does not allow (SysctlForbidden), the TiDB Operator
// runs "sysctl -w" in a privileged helper container instead, with the main
// container's resources (the pod's effective requests are unchanged); the
// container is built field for field as v1.6 builds it, so that a taken
// over pod template is equal to ours.
func sysctlInit(tc *v1alpha1.TidbCluster, acc defaulting.ComponentAccessor, name string, main corev1.Container,
	psc *corev1.PodSecurityContext) (*corev1.Container, *corev1.PodSecurityContext) {
	if name == "" || acc.Annotations()[label.AnnSysctlInit] != "true" || psc == nil || len(psc.Sysctls) == 0 {
		return nil, psc
	}
	cmd := []string{"sysctl -w"}
	for _, s := range psc.Sysctls {
		cmd = append(cmd, s.Name+"="+s.Value)
	}
	privileged := true
	c := &corev1.Container{
		Name:            name,
		Image:           helperImage(tc),
		Command:         []string{"sh", "-c", strings.Join(cmd, " ")},
		SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
		Resources:       *main.Resources.DeepCopy(),
	}
	out := psc.DeepCopy()
	out.Sysctls = nil
	return c, out
}

// helperImage is spec.helper.image, else busybox:1.26.2.
func helperImage(tc *v1alpha1.TidbCluster) string {
	if h := tc.Spec.Helper; h != nil && h.Image != nil && *h.Image != "" {
		return *h.Image
	}
	return defaultHelperImage
}

// AfterSysctlInit returns inits with c inserted after the sysctl container
// (the first, named sysctlName, when present) and before the user's init
// containers, the order the TiDB Operator gives its own init containers.
func AfterSysctlInit(inits []corev1.Container, sysctlName string, c corev1.Container) []corev1.Container {
	at := 0
	if len(inits) > 0 && inits[0].Name == sysctlName {
		at = 1
	}
	out := append([]corev1.Container{}, inits[:at]...)
	out = append(out, c)
	return append(out, inits[at:]...)
}
