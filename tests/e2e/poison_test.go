//go:build integration

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

var tidbClusters = schema.GroupVersionResource{Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbclusters"}

// poison is a TidbCluster the API server accepts (the CRD leaves config and
// Kubernetes pass-through types open) but whose spec the Go types cannot
// hold as written; field is what validation must name.
type poison struct {
	name, field string
	pd          map[string]any
}

var poisons = []poison{
	{name: "bad-toml", field: "spec.pd.config", pd: map[string]any{"config": "this is [ not toml = = "}},
	{name: "bad-run-as-user", field: "spec.pd.podSecurityContext.runAsUser",
		pd: map[string]any{"podSecurityContext": map[string]any{"runAsUser": "root"}}},
	{name: "bad-config-number", field: "spec.pd.config", pd: map[string]any{"config": int64(5)}},
	{name: "bad-affinity", field: "spec.pd.affinity.nodeAffinity", pd: map[string]any{"affinity": map[string]any{"nodeAffinity": int64(5)}}},
}

// createPoison writes p through the dynamic client, so that no Go type of
// ours is involved on the way in.
func createPoison(t *testing.T, env *framework.Env, p poison) {
	t.Helper()
	pd := map[string]any{"replicas": int64(1), "requests": map[string]any{"storage": "1Gi"}}
	for k, v := range p.pd {
		pd[k] = v
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pingcap.com/v1alpha1", "kind": "TidbCluster",
		"metadata": map[string]any{"name": p.name},
		"spec":     map[string]any{"version": "v8.5.0", "pd": pd},
	}}
	if _, err := env.Dynamic.Resource(tidbClusters).Namespace(env.Namespace).Create(env.Ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the API server must accept %s (its schema leaves the field open): %v", p.name, err)
	}
}

// TestPoisonObjectsNeverStopOtherClusters creates TidbClusters whose spec
// cannot be read, some before the operator starts (its first list) and some
// after (its watch), and checks that each is reported invalid with the
// field named and nothing written for it, while a healthy cluster beside
// them is scaled and converges.
func TestPoisonObjectsNeverStopOtherClusters(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	createPoison(t, env, poisons[0])
	createPoison(t, env, poisons[1])
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	for _, p := range poisons[2:] {
		createPoison(t, env, p)
	}

	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"replicas": 4}})
	waitReady(t, env, pc, "basic scaled to 4 TiKV stores beside the poison objects", func(tc *v1alpha1.TidbCluster) bool {
		return upStoresOf(tc) == 4 && tc.Status.TiKV.StatefulSet != nil && tc.Status.TiKV.StatefulSet.ReadyReplicas == 4
	})

	for _, p := range poisons {
		waitInvalid(t, env, p)
	}
	sets, err := env.Kube.AppsV1().StatefulSets(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets.Items {
		if s.Labels[label.InstanceLabelKey] != "basic" {
			t.Errorf("StatefulSet %s was written for an unreadable cluster", s.Name)
		}
	}
	svcs, err := env.Kube.CoreV1().Services(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		if !strings.HasPrefix(s.Name, "basic-") {
			t.Errorf("Service %s was written for an unreadable cluster", s.Name)
		}
	}
}

// waitInvalid waits for p's Degraded condition and Warning event, both
// naming p.field.
func waitInvalid(t *testing.T, env *framework.Env, p poison) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, time.Minute, p.name+" is Degraded, naming "+p.field, func(ctx context.Context) (bool, error) {
		obj, err := env.Dynamic.Resource(tidbClusters).Namespace(env.Namespace).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == v1alpha1.TidbClusterDegraded && m["status"] == string(metav1.ConditionTrue) {
				msg, _ := m["message"].(string)
				framework.Observef(ctx, "Degraded: %s", msg)
				return strings.Contains(msg, p.field), nil
			}
		}
		return false, nil
	})
	framework.WaitFor(t, env.Ctx, time.Minute, p.name+" has a FailedValidation event", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "reason=FailedValidation,involvedObject.name=" + p.name})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Type == "Warning" && strings.Contains(e.Message, p.field) {
				return true, nil
			}
		}
		return false, nil
	})
}
