//go:build integration

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
	"github.com/kubetidb/tidb-operator/tests/v1layout/v1objects"
)

// sysctlExample is the example whose PD, TiKV and TiDB ask for their
// sysctls through tidb.pingcap.com/sysctl-init.
var sysctlExample = filepath.Join("examples", "sysctl-init", "tidb-cluster.yaml")

// sysctlCommands is the command v1.6 runs in each component's "init"
// container for examples/sysctl-init.
var sysctlCommands = map[string]string{
	"pd":   "sysctl -w net.core.somaxconn=32768",
	"tikv": "sysctl -w net.core.somaxconn=32768",
	"tidb": "sysctl -w net.ipv4.tcp_keepalive_time=300 net.ipv4.tcp_keepalive_intvl=75 net.core.somaxconn=32768",
}

// checkSysctlInit asserts that pod carries no sysctl and starts with the
// privileged helper container that sets the component's sysctls, and
// returns what is wrong ("" for nothing).
func checkSysctlInit(pod *corev1.PodSpec, comp string) string {
	if sc := pod.SecurityContext; sc != nil && len(sc.Sysctls) > 0 {
		return fmt.Sprintf("sysctls on the pod: %v", sc.Sysctls)
	}
	if len(pod.InitContainers) == 0 {
		return "no init container"
	}
	c := pod.InitContainers[0]
	want := []string{"sh", "-c", sysctlCommands[comp]}
	switch {
	case c.Name != "init":
		return "first init container is " + c.Name
	case c.Image != "alpine:3.20":
		return "init runs image " + c.Image
	case !slices.Equal(c.Command, want):
		return "init runs " + strings.Join(c.Command, " ")
	case c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged:
		return "init is not privileged"
	}
	return ""
}

// TestSysctlInitExampleKeepsUnsafeSysctlsOffThePods applies
// examples/sysctl-init: the cluster gets Ready, and every PD, TiKV and TiDB
// pod sets its sysctls in the privileged "init" container and has none in
// its security context, where kubelet would refuse the unsafe ones.
func TestSysctlInitExampleKeepsUnsafeSysctlsOffThePods(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), sysctlExample), env.Namespace)
	waitReady(t, env, pc, "examples/sysctl-init is Ready", nil)

	seen := map[string]int{}
	pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(env.Ctx, metav1.ListOptions{LabelSelector: label.InstanceLabelKey + "=basic"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		comp := p.Labels[label.ComponentLabelKey]
		if _, ok := sysctlCommands[comp]; !ok {
			continue
		}
		seen[comp]++
		if msg := checkSysctlInit(&p.Spec, comp); msg != "" {
			t.Errorf("pod %s: %s", p.Name, msg)
		}
	}
	if seen["pd"] != 3 || seen["tikv"] != 3 || seen["tidb"] != 2 {
		t.Errorf("pods checked by component: %v, want 3 PD, 3 TiKV, 2 TiDB", seen)
	}
}

// TestTakeoverOfAV1SysctlInitClusterRestartsNothing lays out
// examples/sysctl-init as the TiDB Operator v1.6 does (tests/v1layout/v1objects),
// its StatefulSets starting with v1's sysctl "init" container, lets the
// pods run with no operator, then starts ours: once Ready and settled no
// pod was replaced and the templates still have v1's container.
func TestTakeoverOfAV1SysctlInitClusterRestartsNothing(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx

	framework.ApplyYAMLFile(t, ctx, filepath.Join(framework.RepoRoot(), sysctlExample), env.Namespace)
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The v1 layout is written for a cluster that rolls on config changes
	// with dynamic configuration, as examples/basic.
	tc.Spec.ConfigUpdateStrategy = v1alpha1.ConfigUpdateStrategyRollingUpdate
	tc.Spec.EnableDynamicConfiguration = ptr.To(true)
	if tc, err = pc.PingcapV1alpha1().TidbClusters(env.Namespace).Update(ctx, tc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1objects.Create(t, env, tc, "discovery", "pd", "tikv", "tidb")
	checkTemplatesSysctlInit(t, env, "in v1's layout")
	before := readyPodUIDs(t, env, basicPods)

	mgr := operator.StartManager(t, env.Namespace, nil)
	waitReady(t, env, pc, "basic is Ready under our operator", nil)
	checkNoWritesWhenConverged(t, ctx, env, mgr)

	after := readyPodUIDs(t, env, basicPods)
	for name, uid := range before {
		if after[name] != uid {
			t.Errorf("pod %s was replaced by the takeover (UID %s → %s)", name, uid, after[name])
		}
	}
	checkTemplatesSysctlInit(t, env, "after the takeover")
}

// checkTemplatesSysctlInit asserts the sysctl init container of v1 on the
// PD, TiKV and TiDB StatefulSets' templates.
func checkTemplatesSysctlInit(t *testing.T, env *framework.Env, when string) {
	t.Helper()
	for comp := range sysctlCommands {
		sts := getStatefulSet(t, env, "basic-"+comp)
		if msg := checkSysctlInit(&sts.Spec.Template.Spec, comp); msg != "" {
			t.Errorf("StatefulSet basic-%s %s: %s", comp, when, msg)
		}
	}
}
