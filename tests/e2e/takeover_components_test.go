//go:build integration

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
	"github.com/kubetidb/tidb-operator/tests/v1layout"
	"github.com/kubetidb/tidb-operator/tests/v1layout/v1objects"
)

// everyComponent is every component ClusterYAML runs, discovery included.
var everyComponent = []string{"discovery", "pd", "tikv", "tidb", "tiflash", "ticdc", "pump", "tiproxy"}

// TestTakeoverOfEveryV1ComponentRestartsNothing builds a cluster with
// TiFlash, TiCDC, Pump and TiProxy (v1layout.ClusterYAML) the way the TiDB
// Operator v1.6 lays it out — TiFlash's log tailers after tiflash with
// v1's commands and init script, TiCDC's one-line command, Pump's script
// and TiProxy's template without probe or TZ — with no operator running,
// then starts ours. Once Ready and settled, no pod was replaced and no
// StatefulSet got a new revision. A real change afterwards (a TiFlash
// config key) rolls the TiFlash pod and drops the adoption mark.
func TestTakeoverOfEveryV1ComponentRestartsNothing(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx

	framework.ApplyYAML(t, ctx, v1layout.ClusterYAML, env.Namespace)
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1objects.Create(t, env, tc, everyComponent...)
	before := readyPodUIDs(t, env, v1layout.ClusterPods)
	revisions := statefulSetRevisions(t, env)

	start := time.Now()
	mgr := operator.StartManager(t, env.Namespace, nil)
	waitReady(t, env, pc, "the cluster is Ready under our operator", nil)
	checkNoWritesWhenConverged(t, ctx, env, mgr)
	t.Logf("taken over and converged in %v", time.Since(start).Round(time.Second))

	after := readyPodUIDs(t, env, v1layout.ClusterPods)
	for name, uid := range before {
		if after[name] != uid {
			t.Errorf("pod %s was replaced by the takeover (UID %s → %s)", name, uid, after[name])
		}
	}
	for name, rev := range statefulSetRevisions(t, env) {
		if rev != revisions[name] {
			t.Errorf("StatefulSet %s was re-templated by the takeover (revision %s → %s)", name, revisions[name], rev)
		}
	}
	if len(revisions) != 7 {
		t.Errorf("StatefulSets %v, want one per component", revisions)
	}
	checkNoV1Annotations(t, env)
	if sts := getStatefulSet(t, env, "basic-tiflash"); sts.Annotations[apply.AnnAdoptedTemplate] == "" ||
		sts.Spec.Template.Spec.Containers[0].Name != "tiflash" {
		t.Errorf("TiFlash's v1 template must be adopted as it is (tiflash first), got mark %q, containers %v",
			sts.Annotations[apply.AnnAdoptedTemplate], sts.Spec.Template.Spec.Containers)
	}

	patchSpec(t, env, pc, map[string]any{"tiflash": map[string]any{"config": map[string]any{
		"config": map[string]any{"logger": map[string]any{"level": "warn"}}}}})
	framework.WaitFor(t, ctx, readyTimeout, "a real TiFlash config change rolls the TiFlash pod", func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{
			LabelSelector: label.ComponentLabelKey + "=tiflash," + label.InstanceLabelKey + "=basic"})
		if err != nil {
			return false, err
		}
		replaced := 0
		for _, p := range pods.Items {
			if p.UID != before[p.Name] && component.PodReady(&p) {
				replaced++
			}
		}
		sts := getStatefulSet(t, env, "basic-tiflash")
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "%d of 1 TiFlash pods replaced; StatefulSet revisions %s → %s, partition %v; conditions %+v",
			replaced, sts.Status.CurrentRevision, sts.Status.UpdateRevision, sts.Spec.UpdateStrategy.RollingUpdate, tc.Status.Conditions)
		return replaced == 1, nil
	})
	waitReady(t, env, pc, "the cluster is Ready after the TiFlash change", nil)
	if sts := getStatefulSet(t, env, "basic-tiflash"); sts.Annotations[apply.AnnAdoptedTemplate] != "" {
		t.Error("the adoption mark must go with the real change")
	}
}

// statefulSetRevisions returns the update revision of each of basic's
// StatefulSets: a changed template gives a new one.
func statefulSetRevisions(t *testing.T, env *framework.Env) map[string]string {
	t.Helper()
	sets, err := env.Kube.AppsV1().StatefulSets(env.Namespace).List(env.Ctx, metav1.ListOptions{LabelSelector: label.InstanceLabelKey + "=basic"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range sets.Items {
		out[s.Name] = s.Status.UpdateRevision
	}
	return out
}
