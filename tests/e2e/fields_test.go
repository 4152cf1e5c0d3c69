//go:build integration

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// fieldsPatch turns on, on examples/basic, the fields that used to be read
// by no code: TiDB's token authentication, customized startup probe and
// native-sidecar slow-log tailer, discovery's probes, PD's initWaitTime
// (which acts in the v2 script's address-match wait).
var fieldsPatch = map[string]any{
	"startScriptVersion":        "v2",
	"startScriptV2FeatureFlags": []string{"WaitForDnsNameIpMatch"},
	"discovery":                 map[string]any{"livenessProbe": map[string]any{"initialDelaySeconds": 30, "periodSeconds": 10}, "readinessProbe": map[string]any{}},
	"pd":                        map[string]any{"initWaitTime": 7},
	"tidb": map[string]any{
		"tokenBasedAuthEnabled": true,
		"slowLogTailer":         map[string]any{"useSidecar": true},
		"customizedStartupProbe": map[string]any{"image": "example.com/tidb-probe:v1", "binaryName": "/bin/tidb-probe",
			"args": []string{"--port=4000"}, "periodSeconds": 5, "failureThreshold": 60},
	},
}

// TestFieldsOnceIgnoredNowAct applies examples/basic, waits for Ready,
// turns fieldsPatch on, and once the cluster is Ready again at that
// generation checks every TiDB pod, the discovery Deployment and PD's
// start script for what each field asks.
func TestFieldsOnceIgnoredNowAct(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	patchSpec(t, env, pc, fieldsPatch)
	waitReady(t, env, pc, "basic is Ready with the fields on", func(*v1alpha1.TidbCluster) bool {
		return tidbPodsMatch(env.Ctx, t, env, func(p *corev1.Pod) bool { return p.Spec.Containers[0].StartupProbe != nil })
	})

	tidbPodsMatch(env.Ctx, t, env, func(p *corev1.Pod) bool {
		if msg := checkTiDBFields(&p.Spec); msg != "" {
			t.Errorf("pod %s: %s", p.Name, msg)
		}
		return true
	})
	tidbConfig := configMapData(t, env, mountedConfigMap(t, env, "basic-tidb"), component.ConfigFileKey)
	if !strings.Contains(tidbConfig, "auth-token-jwks = '/var/lib/tidb-auth-token/tidb_auth_token_jwks.json'") {
		t.Errorf("TiDB's config names no JWKS file:\n%s", tidbConfig)
	}
	pdScript := configMapData(t, env, mountedConfigMap(t, env, "basic-pd"), component.StartScriptKey)
	if !strings.Contains(pdScript, "\nsleep 7\n") {
		t.Errorf("PD's start script does not wait initWaitTime:\n%s", pdScript)
	}
	checkDiscoveryProbes(t, env)
}

// tidbPodsMatch tells whether basic's two TiDB pods exist and each
// satisfies ok.
func tidbPodsMatch(ctx context.Context, t *testing.T, env *framework.Env, ok func(*corev1.Pod) bool) bool {
	t.Helper()
	pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: label.ComponentLabelKey + "=tidb," + label.InstanceLabelKey + "=basic"})
	if err != nil || len(pods.Items) != 2 {
		return false
	}
	for i := range pods.Items {
		if !ok(&pods.Items[i]) {
			return false
		}
	}
	return true
}

// checkTiDBFields returns what of the token auth, the startup probe and
// the native sidecar a TiDB pod lacks ("" for nothing).
func checkTiDBFields(pod *corev1.PodSpec) string {
	main := pod.Containers[0]
	var names []string
	for _, c := range pod.Containers {
		names = append(names, c.Name)
	}
	if len(pod.Containers) != 1 || main.Name != "tidb" {
		return "containers " + strings.Join(names, ",") + ", want tidb alone (the tailer a native sidecar)"
	}
	if !hasSecretVolume(pod, "basic-tidb-auth-token-jwks-secret") || !hasMount(main, "/var/lib/tidb-auth-token") {
		return "the JWKS Secret is not mounted at /var/lib/tidb-auth-token"
	}
	p := main.StartupProbe
	if p == nil || p.Exec == nil || !slices.Equal(p.Exec.Command, []string{"/var/lib/startup-probe/tidb-probe", "--port=4000"}) ||
		p.PeriodSeconds != 5 || p.FailureThreshold != 60 {
		return "startup probe is not the customized one"
	}
	inits := pod.InitContainers
	if len(inits) != 2 || inits[0].Name != "startup-probe" || inits[0].Image != "example.com/tidb-probe:v1" {
		return "init containers are not the probe's copy then the tailer"
	}
	if tailer := inits[1]; tailer.Name != "slowlog" || tailer.RestartPolicy == nil || *tailer.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		return "the slow-log tailer is not a native sidecar"
	}
	return ""
}

func hasSecretVolume(pod *corev1.PodSpec, secret string) bool {
	return slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == secret })
}

func hasMount(c corev1.Container, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path })
}

// configMapData is one key of a ConfigMap of the test's namespace.
func configMapData(t *testing.T, env *framework.Env, name, key string) string {
	t.Helper()
	cm, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ConfigMap %s: %v", name, err)
	}
	return cm.Data[key]
}

// checkDiscoveryProbes asserts fieldsPatch's TCP probes on the discovery
// container.
func checkDiscoveryProbes(t *testing.T, env *framework.Env) {
	t.Helper()
	d, err := env.Kube.AppsV1().Deployments(env.Namespace).Get(env.Ctx, "basic-discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	live, ready := c.LivenessProbe, c.ReadinessProbe
	if live == nil || live.TCPSocket == nil || live.TCPSocket.Port.IntValue() != 10261 || live.InitialDelaySeconds != 30 || live.PeriodSeconds != 10 {
		t.Errorf("discovery liveness probe %+v, want TCP 10261 after 30s every 10s", live)
	}
	if ready == nil || ready.TCPSocket == nil || ready.TCPSocket.Port.IntValue() != 10261 {
		t.Errorf("discovery readiness probe %+v, want TCP 10261", ready)
	}
}

// TestPDMountsTheClusterClientSecret runs a TLS cluster whose PD has
// mountClusterClientSecret: it gets Ready and every PD pod mounts
// <tc>-cluster-client-secret at /var/lib/cluster-client-tls.
func TestPDMountsTheClusterClientSecret(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "pdclient"}
	operator.StartManager(t, env.Namespace, nil)
	framework.CreateSecrets(t, env.Ctx, env.Kube, e2eCA.ClusterSecrets(t, env.Namespace, f.name, "pd", "tikv", "tidb")...)
	manifest := strings.Replace(strings.ReplaceAll(tlsClusterYAML, "NAME", f.name),
		"pd: {baseImage: pingcap/pd,", "pd: {mountClusterClientSecret: true, baseImage: pingcap/pd,", 1)
	framework.ApplyYAML(t, env.Ctx, manifest, env.Namespace)
	f.waitReady(t, "the TLS cluster is Ready", func(tc *v1alpha1.TidbCluster) bool { return upStoresOf(tc) == 3 })

	sts := getStatefulSet(t, env, f.name+"-pd")
	pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(env.Ctx, metav1.ListOptions{
		LabelSelector: label.ComponentLabelKey + "=pd," + label.InstanceLabelKey + "=" + f.name})
	if err != nil {
		t.Fatal(err)
	}
	specs := []*corev1.PodSpec{&sts.Spec.Template.Spec}
	for i := range pods.Items {
		specs = append(specs, &pods.Items[i].Spec)
	}
	if len(specs) != 4 {
		t.Errorf("%d PD pods, want 3", len(specs)-1)
	}
	for _, s := range specs {
		if !hasSecretVolume(s, f.name+"-cluster-client-secret") || !hasMount(s.Containers[0], "/var/lib/cluster-client-tls") {
			t.Errorf("a PD pod (or the template) lacks the cluster client secret at /var/lib/cluster-client-tls: %+v", s.Volumes)
		}
	}
}
