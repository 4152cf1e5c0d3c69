package component_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

const v1ConfigMap = "basic-pd-1a2b3c4"

// toV1 rewrites the converged PD objects as the TiDB Operator v1 leaves
// them: the ConfigMap under v1's name with other TOML layout and other
// script text (same command line), no applied hashes of ours, v1's
// last-applied annotation, the variables in another order.
func toV1(t *testing.T, f *fixture) {
	t.Helper()
	ctx, kube := context.Background(), f.deps.KubeClient
	cms, _ := kube.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
	ours := cms.Items[0]
	mustAdd(t, kube.CoreV1().ConfigMaps("ns").Delete(ctx, ours.Name, metav1.DeleteOptions{}))
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().ConfigMaps().Informer().GetIndexer().Delete(&ours))
	v1 := ours.DeepCopy()
	v1.Name, v1.ResourceVersion = v1ConfigMap, ""
	delete(v1.Annotations, apply.AnnAppliedHash)
	v1.Data[component.ConfigFileKey] = "\n[log]\n  level   =   \"info\"\n"
	script := strings.ReplaceAll(v1.Data[component.StartScriptKey], "FQDN", "domain")
	v1.Data[component.StartScriptKey] = strings.Replace(script, "\n", "\n# laid out by v1\n", 1)
	_, err := kube.CoreV1().ConfigMaps("ns").Create(ctx, v1, metav1.CreateOptions{})
	mustAdd(t, err)

	sts, _ := kube.AppsV1().StatefulSets("ns").Get(ctx, "basic-pd", metav1.GetOptions{})
	delete(sts.Annotations, apply.AnnAppliedHash)
	delete(sts.Annotations, component.AnnTemplateHash)
	sts.Annotations[apply.AnnV1LastApplied] = "{}"
	env := sts.Spec.Template.Spec.Containers[0].Env
	slices.Reverse(env)
	for i := range sts.Spec.Template.Spec.Volumes {
		if cm := sts.Spec.Template.Spec.Volumes[i].ConfigMap; cm != nil {
			cm.Name = v1ConfigMap
		}
	}
	_, err = kube.AppsV1().StatefulSets("ns").Update(ctx, sts, metav1.UpdateOptions{})
	mustAdd(t, err)
	f.seed(t)
}

// TestTakeoverOfV1PDRestartsNothing: the first sync writes the StatefulSet
// once, keeping v1's template (and so its pods) and ConfigMap, dropping
// v1's annotation; the next sync writes nothing; a real config change
// writes a new ConfigMap and our template, and once every pod runs it,
// v1's ConfigMap is deleted.
func TestTakeoverOfV1PDRestartsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	ctx := context.Background()
	_ = f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	toV1(t, f)
	f.deps.FakeKube.ClearActions()

	err := f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	if re, ok := flow.AsRequeue(err); !ok || !strings.Contains(re.Reason, "took over") {
		t.Fatalf("takeover sync: %v", err)
	}
	w := writes(f.deps)
	if len(w) != 1 || w[0].GetVerb() != "update" || w[0].GetResource().Resource != "statefulsets" {
		t.Fatalf("takeover must write the StatefulSet once and nothing else: %v", w)
	}
	sts := w[0].(k8stesting.UpdateAction).GetObject().(*appsv1.StatefulSet)
	if configVolume(sts) != v1ConfigMap || sts.Spec.Template.Spec.Containers[0].Env[0].Name == "NAMESPACE" {
		t.Errorf("v1's template must be kept as it is (mounts %s)", configVolume(sts))
	}
	if _, ok := sts.Annotations[apply.AnnV1LastApplied]; ok || sts.Annotations[apply.AnnAdoptedTemplate] == "" {
		t.Errorf("annotations %v: v1's last-applied must go, the adoption mark come", sts.Annotations)
	}

	f.seed(t)
	f.deps.FakeKube.ClearActions()
	if err := f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatalf("sync after takeover: %v", err)
	}
	if w := writes(f.deps); len(w) != 0 {
		t.Fatalf("converged after takeover, but wrote %v", w)
	}

	changed := func() *v1alpha1.TidbCluster {
		tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
		tc.Spec.PD.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}})
		return tc
	}
	if err := f.mgr.Sync(ctx, changed()); err != nil {
		t.Fatalf("config change: %v", err)
	}
	live, _ := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(ctx, "basic-pd", metav1.GetOptions{})
	if configVolume(live) == v1ConfigMap || live.Annotations[apply.AnnAdoptedTemplate] != "" {
		t.Fatalf("a real change must write our template and drop the mark (mounts %s)", configVolume(live))
	}
	f.seed(t) // every pod on the new revision, but one not Ready: not at rest
	setStatefulSetStatus(t, f, "basic-pd", func(s *appsv1.StatefulSetStatus) {
		s.UpdatedReplicas, s.ReadyReplicas = s.Replicas, s.Replicas-1
	})
	_ = f.mgr.Sync(ctx, changed())
	if _, err := f.deps.KubeClient.CoreV1().ConfigMaps("ns").Get(ctx, v1ConfigMap, metav1.GetOptions{}); err != nil {
		t.Fatalf("v1's ConfigMap must stay until the StatefulSet is at rest: %v", err)
	}
	setStatefulSetStatus(t, f, "basic-pd", func(s *appsv1.StatefulSetStatus) { s.ReadyReplicas = s.Replicas })
	if err := f.mgr.Sync(ctx, changed()); err != nil {
		t.Fatalf("after the rollout: %v", err)
	}
	if _, err := f.deps.KubeClient.CoreV1().ConfigMaps("ns").Get(ctx, v1ConfigMap, metav1.GetOptions{}); err == nil {
		t.Error("v1's ConfigMap must be deleted once no pod mounts it")
	}
}

// setStatefulSetStatus edits the cached status of StatefulSet name.
func setStatefulSetStatus(t *testing.T, f *fixture, name string, edit func(*appsv1.StatefulSetStatus)) {
	t.Helper()
	idx := f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer()
	obj, ok, err := idx.GetByKey("ns/" + name)
	if err != nil || !ok {
		t.Fatalf("StatefulSet %s not cached: %v", name, err)
	}
	s := obj.(*appsv1.StatefulSet).DeepCopy()
	edit(&s.Status)
	mustAdd(t, idx.Update(s))
}
