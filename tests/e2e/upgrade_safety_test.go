//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/tidb"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// annotateTC merge-patches basic's annotations (nil values remove keys).
func annotateTC(t *testing.T, env *framework.Env, pc versioned.Interface, annotations map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotate basic: %v", err)
	}
}

// TestUpgradeSafetyTiKVWaitsForAllStoresUp: with
// tikv-check-all-stores-up-before-upgrade, a TiKV rollout restarts no
// further pod while a store is Down — even the Down store's own pod, which
// the rollout would restart next — says so in Progressing, and proceeds
// once the store is Up again. (tikv-min-ready-seconds holds the rollout
// after basic-tikv-2's restart long enough to take basic-tikv-1's store
// down first.)
func TestUpgradeSafetyTiKVWaitsForAllStoresUp(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	state, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	var down uint64
	for _, s := range state.Stores {
		if s.PodName == "basic-tikv-1" {
			down = s.ID
		}
	}
	if down == 0 {
		t.Fatalf("no store of basic-tikv-1 in %+v", state.Stores)
	}
	annotateTC(t, env, pc, map[string]any{label.AnnTiKVCheckAllStoresUpBeforeUpgrade: "true", "tidb.pingcap.com/tikv-min-ready-seconds": "15"})
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"version": "v8.5.1"}})
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic-tikv-2 restarted onto v8.5.1 and Ready", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "basic-tikv-2", metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // being recreated
		}
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		return ready && podRunsTag(*p, "tikv", "v8.5.1"), nil
	})
	before := podUIDs(t, env, "tikv")
	if err := sim.SetStoreDown(env.Ctx, env.Namespace, "basic", down, true); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "the TiKV rollout waits for every store Up", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		if p != nil {
			framework.Observef(ctx, "progressing: %s", p.Message)
		}
		return p != nil && strings.Contains(p.Message, label.AnnTiKVCheckAllStoresUpBeforeUpgrade) && strings.Contains(p.Message, "not Up"), nil
	})
	for pod, uid := range podUIDs(t, env, "tikv") {
		if before[pod] != uid {
			t.Fatalf("TiKV pod %s restarted while a store was Down", pod)
		}
	}
	if err := sim.SetStoreDown(env.Ctx, env.Namespace, "basic", down, false); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, pc, "every TiKV pod runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return imagesAre(env, "tikv", "v8.5.1")(tc) && tc.Status.TiKV.Phase == v1alpha1.NormalPhase
	})
}

// TestUpgradeSafetyTiDBSmoothUpgrade: a TiDB v7.1.2 → v7.5.0 upgrade asks
// TiDB for /upgrade/start while every server still runs v7.1.2 and for
// /upgrade/finish once every server runs v7.5.0, records the pause on the
// TidbCluster meanwhile and leaves no annotation behind.
func TestUpgradeSafetyTiDBSmoothUpgrade(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	manifest, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	framework.ApplyYAML(t, env.Ctx, strings.Replace(string(manifest), "version: v8.5.0", "version: v7.1.2", 1), env.Namespace)
	waitReady(t, env, pc, "basic is Ready at v7.1.2", imagesAre(env, "tidb", "v7.1.2"))

	paused := false
	watchCtx, stop := context.WithCancel(env.Ctx)
	done := make(chan struct{})
	go func() { // the pause is recorded on the TidbCluster while the servers roll
		defer close(done)
		poll(watchCtx, func(ctx context.Context) bool {
			tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
			if err == nil && tc.Annotations[label.AnnSmoothUpgradeDDLPaused] == "true" &&
				tc.Annotations[label.AnnSmoothUpgradeSourceVersion] == "v7.1.2" && tc.Annotations[label.AnnSmoothUpgradeTargetVersion] == "v7.5.0" {
				paused = true
			}
			return !paused
		})
	}()
	patchSpec(t, env, pc, map[string]any{"tidb": map[string]any{"version": "v7.5.0"}})
	waitReady(t, env, pc, "every TiDB server runs v7.5.0 and no smooth-upgrade annotation is left", func(tc *v1alpha1.TidbCluster) bool {
		for _, k := range label.SmoothUpgradeAnnotations {
			if _, ok := tc.Annotations[k]; ok {
				return false
			}
		}
		return imagesAre(env, "tidb", "v7.5.0")(tc) && tc.Status.TiDB.Phase == v1alpha1.NormalPhase
	})
	stop()
	<-done
	if !paused {
		t.Error("the TidbCluster never recorded the pause v7.1.2 → v7.5.0")
	}
	state, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	up := state.TiDBUpgrade
	if up.Upgrading || len(up.Calls) != 2 {
		t.Fatalf("TiDB smooth-upgrade state %+v, want one start and one finish, not upgrading", up)
	}
	start, finish := up.Calls[0], up.Calls[1]
	if start.Op != "start" || start.Status != 200 || finish.Op != "finish" || finish.Status != 200 {
		t.Fatalf("calls %+v, want start then finish, both accepted", up.Calls)
	}
	for pod, v := range start.Versions {
		if v != "v7.1.2" {
			t.Errorf("/upgrade/start came after %s restarted onto %s", pod, v)
		}
	}
	for pod, v := range finish.Versions {
		if v != "v7.5.0" {
			t.Errorf("/upgrade/finish came while %s still ran %s", pod, v)
		}
	}
	if len(start.Versions) != 2 || len(finish.Versions) != 2 {
		t.Errorf("versions at start %v and finish %v, want both TiDB servers", start.Versions, finish.Versions)
	}
	waitEvent(t, env, corev1.EventTypeNormal, tidb.ReasonSmoothUpgradeStarted, "v7.1.2 → v7.5.0")
	waitEvent(t, env, corev1.EventTypeNormal, tidb.ReasonSmoothUpgradeFinished, "v7.1.2 → v7.5.0")
}
