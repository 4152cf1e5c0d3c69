//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// deployBasic applies examples/basic and waits until it is Ready.
func deployBasic(t *testing.T, env *framework.Env) versioned.Interface {
	t.Helper()
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), env.Namespace)
	waitReady(t, env, pc, "basic is Ready", nil)
	return pc
}

// waitReady waits until basic is Ready at its current generation and extra
// (when not nil) holds.
func waitReady(t *testing.T, env *framework.Env, pc versioned.Interface, desc string, extra func(*v1alpha1.TidbCluster) bool) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		progressing := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		framework.Observef(ctx, "generation %d/%d ready=%+v progressing=%+v", tc.Status.ObservedGeneration, tc.Generation, ready, progressing)
		ok := ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation
		return ok && (extra == nil || extra(tc)), nil
	})
}

// patchSpec merge-patches basic's spec.
func patchSpec(t *testing.T, env *framework.Env, pc versioned.Interface, spec map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch basic: %v", err)
	}
}

// poll calls f every 200ms until ctx ends or f returns false; the e2e
// invariant checks use it to watch a change while it happens.
func poll(ctx context.Context, f func(context.Context) bool) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for f(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

type simState = api.ClusterState
