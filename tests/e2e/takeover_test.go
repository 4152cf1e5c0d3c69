//go:build integration

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
	"github.com/kubetidb/tidb-operator/tests/v1layout/v1objects"
)

// basicPods is how many pods examples/basic runs: 3 PD, 3 TiKV, 2 TiDB and
// discovery.
const basicPods = 9

// readyPodUIDs waits until basic's want pods all exist and are Ready and
// returns their UIDs by name.
func readyPodUIDs(t *testing.T, env *framework.Env, want int) map[string]types.UID {
	t.Helper()
	var uids map[string]types.UID
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic's pods Ready", func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: label.InstanceLabelKey + "=basic"})
		if err != nil {
			return false, err
		}
		uids = map[string]types.UID{}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && component.PodReady(p) {
				uids[p.Name] = p.UID
			}
		}
		framework.Observef(ctx, "%d of %d pods Ready", len(uids), want)
		return len(uids) == want, nil
	})
	return uids
}

// TestTakeoverOfAV1ClusterRestartsNothing builds examples/basic the way
// the TiDB Operator v1.6 lays it out (tests/v1layout/v1objects) with no operator
// running, lets the pods run, then starts ours. Once the cluster is Ready
// and a settle window of syncs wrote nothing, no pod was replaced, v1's
// last-applied annotations are gone, and the StatefulSets still mount v1's
// ConfigMaps. A real change afterwards (a PD config key) does roll PD, and
// v1's PD ConfigMap is deleted once no pod mounts it.
func TestTakeoverOfAV1ClusterRestartsNothing(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx

	framework.ApplyYAMLFile(t, ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), env.Namespace)
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1objects.Create(t, env, tc, "discovery", "pd", "tikv", "tidb")
	before := readyPodUIDs(t, env, basicPods)
	pdConfigMap := mountedConfigMap(t, env, "basic-pd")

	start := time.Now()
	mgr := operator.StartManager(t, env.Namespace, nil)
	waitReady(t, env, pc, "basic is Ready under our operator", nil)
	checkNoWritesWhenConverged(t, ctx, env, mgr)
	t.Logf("taken over and converged in %v", time.Since(start).Round(time.Second))

	after := readyPodUIDs(t, env, basicPods)
	for name, uid := range before {
		if after[name] != uid {
			t.Errorf("pod %s was replaced by the takeover (UID %s → %s)", name, uid, after[name])
		}
	}
	checkNoV1Annotations(t, env)
	if got := mountedConfigMap(t, env, "basic-pd"); got != pdConfigMap {
		t.Errorf("PD mounts ConfigMap %s after the takeover, want v1's %s kept", got, pdConfigMap)
	}

	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"config": "[replication]\nmax-replicas = 3\n[log]\nlevel = \"warn\"\n"}})
	framework.WaitFor(t, ctx, readyTimeout, "a real PD config change rolls every PD pod", func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: label.ComponentLabelKey + "=pd," + label.InstanceLabelKey + "=basic"})
		if err != nil {
			return false, err
		}
		replaced := 0
		for _, p := range pods.Items {
			if p.UID != before[p.Name] && component.PodReady(&p) {
				replaced++
			}
		}
		framework.Observef(ctx, "%d of 3 PD pods replaced", replaced)
		return replaced == 3, nil
	})
	waitReady(t, env, pc, "basic is Ready after the PD change", nil)
	if got := mountedConfigMap(t, env, "basic-pd"); got == pdConfigMap {
		t.Errorf("PD still mounts v1's ConfigMap %s after a config change", got)
	}
	framework.WaitFor(t, ctx, time.Minute, "v1's PD ConfigMap deleted once no pod mounts it", func(ctx context.Context) (bool, error) {
		_, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(ctx, pdConfigMap, metav1.GetOptions{})
		framework.Observef(ctx, "get %s: %v", pdConfigMap, err)
		return apierrors.IsNotFound(err), nil
	})
	if tikv := mountedConfigMap(t, env, "basic-tikv"); !strings.HasPrefix(tikv, "basic-tikv-") {
		t.Errorf("TiKV mounts %s", tikv)
	} else if _, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(ctx, tikv, metav1.GetOptions{}); err != nil {
		t.Errorf("v1's TiKV ConfigMap %s, still mounted, must stay: %v", tikv, err)
	}
}

// mountedConfigMap is the ConfigMap a StatefulSet's template mounts as config.
func mountedConfigMap(t *testing.T, env *framework.Env, name string) string {
	t.Helper()
	sts := getStatefulSet(t, env, name)
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == component.ConfigVolumeName && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	t.Fatalf("StatefulSet %s mounts no config volume", name)
	return ""
}

// checkNoV1Annotations asserts that v1's last-applied annotations are gone
// from the cluster's StatefulSets, Services and Deployment.
func checkNoV1Annotations(t *testing.T, env *framework.Env) {
	t.Helper()
	ctx, ns := env.Ctx, env.Namespace
	opts := metav1.ListOptions{LabelSelector: label.InstanceLabelKey + "=basic"}
	var objs []metav1.Object
	sets, err := env.Kube.AppsV1().StatefulSets(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sets.Items {
		objs = append(objs, &sets.Items[i])
	}
	svcs, err := env.Kube.CoreV1().Services(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range svcs.Items {
		objs = append(objs, &svcs.Items[i])
	}
	deps, err := env.Kube.AppsV1().Deployments(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range deps.Items {
		objs = append(objs, &deps.Items[i])
	}
	for _, o := range objs {
		for k := range o.GetAnnotations() {
			if k == label.AnnLastAppliedConfig || k == label.AnnLastAppliedPodTemplate {
				t.Errorf("%s still carries v1's %s", o.GetName(), k)
			}
		}
	}
	if len(objs) < 8 {
		t.Errorf("found %d StatefulSets, Services and Deployments, want the cluster's", len(objs))
	}
}
