//go:build integration

package api

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// typoCluster misspells a field inside affinity and one inside a sidecar:
// the CRD leaves both Kubernetes types open, so the API server stores them.
const typoCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: typos}
spec:
  version: v8.5.0
  pd: {replicas: 1, requests: {storage: 1Gi}}
  tikv:
    replicas: 1
    requests: {storage: 1Gi}
    affinity:
      nodeAfinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Exists}]}]
  tidb:
    replicas: 1
    additionalContainers:
    - name: sidecar
      image: busybox
      imagePullPolcy: Always
`

// typoBackup misspells a field inside a Backup's affinity.
const typoBackup = `apiVersion: pingcap.com/v1alpha1
kind: Backup
metadata: {name: typos}
spec:
  br: {cluster: typos}
  s3: {provider: aws, bucket: b, prefix: p}
  affinity: {podAntiAfinity: {}}
`

// TestUnknownFieldsInPassThroughTypesAreNamed applies a TidbCluster with a
// typo inside affinity and inside additionalContainers to the real API
// server, checks that the server stored them (the schema leaves these types
// open), and that the operator names each by its full JSON path in the
// Degraded condition and in a Warning event; a Backup's typo gets the event.
func TestUnknownFieldsInPassThroughTypesAreNamed(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx
	framework.ApplyYAML(t, ctx, typoCluster, env.Namespace)
	framework.ApplyYAML(t, ctx, typoBackup, env.Namespace)

	gvr := schema.GroupVersionResource{Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbclusters"}
	stored, err := env.Dynamic.Resource(gvr).Namespace(env.Namespace).Get(ctx, "typos", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(stored.Object, "spec", "tikv", "affinity", "nodeAfinity"); !found {
		t.Fatalf("the API server pruned spec.tikv.affinity.nodeAfinity; this test assumes it is stored: %v", stored.Object["spec"])
	}

	paths := []string{"spec.tidb.additionalContainers[0].imagePullPolcy", "spec.tikv.affinity.nodeAfinity"}
	framework.WaitFor(t, ctx, 60*time.Second, "Degraded names the unknown fields", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "typos", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterDegraded)
		framework.Observef(ctx, "degraded %+v", c)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == "UnknownFields" &&
			strings.Contains(c.Message, strings.Join(paths, ", ")), nil
	})
	waitUnknownFieldsEvent(t, env, "TidbCluster", "typos", paths...)
	waitUnknownFieldsEvent(t, env, "Backup", "typos", "spec.affinity.podAntiAfinity")
}

// waitUnknownFieldsEvent waits for one Warning UnknownFields event on the
// object kind/name whose message names every path.
func waitUnknownFieldsEvent(t *testing.T, env *framework.Env, kind, name string, paths ...string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, 60*time.Second, "a Warning UnknownFields event on "+kind+" "+name, func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": "UnknownFields"}.String(),
		})
		if err != nil {
			return false, err
		}
		if len(events.Items) == 0 {
			return false, nil
		}
		ev := events.Items[0]
		framework.Observef(ctx, "events %d, first %s %q (count %d)", len(events.Items), ev.Type, ev.Message, ev.Count)
		if len(events.Items) != 1 || ev.Type != corev1.EventTypeWarning || ev.Count > 1 {
			t.Fatalf("want one Warning event recorded once, got %d, %s, count %d", len(events.Items), ev.Type, ev.Count)
		}
		for _, p := range paths {
			if !strings.Contains(ev.Message, p) {
				return false, nil
			}
		}
		return true, nil
	})
}
