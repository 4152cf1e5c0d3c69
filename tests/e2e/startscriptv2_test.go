//go:build integration

package e2e

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// smallBasic is a one-pod-per-component cluster named basic, so a rolling
// restart of every component stays short.
const smallBasic = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: basic}
spec:
  version: v8.5.0
  configUpdateStrategy: RollingUpdate
  helper: {image: alpine:3.20}
  pd:
    baseImage: pingcap/pd
    replicas: 1
    maxFailoverCount: 0
    requests: {storage: 1Gi}
    config: {replication: {max-replicas: 1}}
  tikv:
    baseImage: pingcap/tikv
    replicas: 1
    maxFailoverCount: 0
    requests: {storage: 1Gi}
    config: {}
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
    maxFailoverCount: 0
    service: {type: ClusterIP}
    config: {}
`

// TestStartScriptV2Switch: a Ready cluster switched from the v1 start
// scripts to startScriptVersion v2 (with WaitForDnsNameIpMatch) gets new
// ConfigMaps carrying the v2 scripts, restarts every PD, TiKV and TiDB pod
// onto them, and is Ready again.
func TestStartScriptV2Switch(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.ApplyYAML(t, env.Ctx, smallBasic, env.Namespace)
	waitReady(t, env, pc, "basic is Ready with the v1 scripts", nil)
	components := []string{"pd", "tikv", "tidb"}
	before := map[string]types.UID{}
	for _, c := range components {
		if s := mountedScript(t, env, c); strings.Contains(s, "Start script (v2)") {
			t.Fatalf("%s starts with a v2 script before the switch:\n%s", c, s)
		}
		before[c] = podUID(t, env, "basic-"+c+"-0")
	}

	patchSpec(t, env, pc, map[string]any{"startScriptVersion": "v2",
		"startScriptV2FeatureFlags": []string{"WaitForDnsNameIpMatch"}})
	waitReady(t, env, pc, "basic is Ready with the v2 scripts, every pod restarted", func(*v1alpha1.TidbCluster) bool {
		for _, c := range components {
			s, ok := tryMountedScript(env, c)
			if !ok || !strings.Contains(s, "Start script (v2)") {
				return false
			}
			if uid := tryPodUID(env, "basic-"+c+"-0"); uid == "" || uid == before[c] {
				return false
			}
		}
		return true
	})
	if s := mountedScript(t, env, "pd"); !strings.Contains(s, "hostname -I") {
		t.Errorf("PD's v2 script does not match the pod's addresses:\n%s", s)
	}
}

// tryMountedScript returns the start script in the ConfigMap component's
// StatefulSet mounts.
func tryMountedScript(env *framework.Env, c string) (string, bool) {
	sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "basic-"+c, metav1.GetOptions{})
	if err != nil || sts.Status.UpdateRevision != sts.Status.CurrentRevision {
		return "", false
	}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == component.ConfigVolumeName && v.ConfigMap != nil {
			cm, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(env.Ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return "", false
			}
			return cm.Data[component.StartScriptKey], true
		}
	}
	return "", false
}

func mountedScript(t *testing.T, env *framework.Env, c string) string {
	t.Helper()
	s, ok := tryMountedScript(env, c)
	if !ok {
		t.Fatalf("no settled StatefulSet basic-%s mounting a ConfigMap", c)
	}
	return s
}

func tryPodUID(env *framework.Env, name string) types.UID {
	pod, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return pod.UID
}
