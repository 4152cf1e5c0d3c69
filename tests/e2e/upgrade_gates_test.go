//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// holdWindow is how long a test watches a rollout that must not move:
// two resyncs (5s each, see operator.StartManager) and then some.
const holdWindow = 12 * time.Second

// TestPDQuorumGateHoldsAnUpgradeWithoutAQuorumToSpare: basic with two PD
// members and tidb.pingcap.com/pd-check-quorum-before-upgrade. Restarting
// either member would leave 1 of 2 healthy, not a quorum, so a PD upgrade
// restarts no PD pod — although both members are healthy and the rollout's
// own checks would let basic-pd-1 go — and Progressing names the gate. Once
// a third member has joined (a scale-out, which comes first), every restart
// keeps 2 of 3 healthy and the upgrade finishes with the annotation still
// set.
func TestPDQuorumGateHoldsAnUpgradeWithoutAQuorumToSpare(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	applyBasicWith(t, env, "  pd:\n    baseImage: pingcap/pd\n    replicas: 3", "  pd:\n    baseImage: pingcap/pd\n    replicas: 2")
	waitReady(t, env, pc, "basic is Ready with 2 PD members", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.Members) == 2
	})
	annotateTC(t, env, pc, map[string]any{label.AnnPDCheckQuorumBeforeUpgrade: "true"})
	before := podUIDs(t, env, "pd")
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"version": "v8.5.1"}})
	waitProgressing(t, env, pc, "the PD rollout waits for a quorum to spare",
		label.AnnPDCheckQuorumBeforeUpgrade, "restarting basic-pd-1 would leave 1 of 2", "not a quorum")
	holdsFor(t, env, holdWindow, func(ctx context.Context) string {
		return restartedSince(ctx, env, "pd", before)
	})

	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"replicas": 3}})
	waitReady(t, env, pc, "3 PD members, all on v8.5.1, the annotation still set", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.Members) == 3 && tc.Annotations[label.AnnPDCheckQuorumBeforeUpgrade] == "true" &&
			imagesAre(env, "pd", "v8.5.1")(tc) && tc.Status.PD.Phase == v1alpha1.NormalPhase
	})
	for pod, uid := range podUIDs(t, env, "pd") {
		if old, ok := before[pod]; ok && old == uid {
			t.Errorf("%s was not restarted onto v8.5.1", pod)
		}
	}
}

// TestForceUpgradeReplacesADownOldTiDBPod: basic-tidb-0 is down (NotReady)
// on the old revision when TiDB is upgraded. The rollout would restart
// basic-tidb-1 first but waits for basic-tidb-0, which only the new
// revision could bring back: no TiDB pod restarts and Progressing says why.
// With tidb.pingcap.com/force-upgrade the rollout proceeds: both pods are
// replaced, run v8.5.1 and the cluster is Ready.
func TestForceUpgradeReplacesADownOldTiDBPod(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	markPodNotReady(t, env, "basic-tidb-0")
	before := podUIDs(t, env, "tidb")
	patchSpec(t, env, pc, map[string]any{"tidb": map[string]any{"version": "v8.5.1"}})
	waitProgressing(t, env, pc, "the TiDB rollout waits for the down basic-tidb-0",
		"pod ordinal 0 must be available before ordinal 1 restarts")
	holdsFor(t, env, holdWindow, func(ctx context.Context) string {
		return restartedSince(ctx, env, "tidb", before)
	})

	annotateTC(t, env, pc, map[string]any{label.AnnForceUpgradeKey: "true"})
	waitReady(t, env, pc, "both TiDB pods replaced and on v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		now := podUIDs(t, env, "tidb")
		return len(now) == 2 && now["basic-tidb-0"] != before["basic-tidb-0"] && now["basic-tidb-1"] != before["basic-tidb-1"] &&
			imagesAre(env, "tidb", "v8.5.1")(tc) && tc.Status.TiDB.Phase == v1alpha1.NormalPhase
	})
}

// applyBasicWith applies examples/basic with old replaced by new (which
// must change it).
func applyBasicWith(t *testing.T, env *framework.Env, old, new string) {
	t.Helper()
	example, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(example), old, new, 1)
	if manifest == string(example) {
		t.Fatalf("examples/basic has no %q to change", old)
	}
	framework.ApplyYAML(t, env.Ctx, manifest, env.Namespace)
}

// waitProgressing waits until basic's Progressing message holds every one
// of texts.
func waitProgressing(t *testing.T, env *framework.Env, pc versioned.Interface, desc string, texts ...string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		p := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		if p == nil {
			return false, nil
		}
		framework.Observef(ctx, "progressing: %s", p.Message)
		for _, s := range texts {
			if !strings.Contains(p.Message, s) {
				return false, nil
			}
		}
		return true, nil
	})
}

// holdsFor checks for d that violation reports nothing, failing the test
// with the first thing it reports.
func holdsFor(t *testing.T, env *framework.Env, d time.Duration, violation func(ctx context.Context) string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(env.Ctx, d)
	defer cancel()
	var bad string
	poll(ctx, func(ctx context.Context) bool {
		bad = violation(ctx)
		return bad == ""
	})
	if bad != "" {
		t.Fatal(bad)
	}
}

// restartedSince names a pod of component that is gone, new or being
// deleted compared with before (pod name → UID), or returns "".
func restartedSince(ctx context.Context, env *framework.Env, component string, before map[string]types.UID) string {
	for pod, uid := range before {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return component + " pod " + pod + " is gone while the rollout had to wait"
		case err != nil:
			return "" // not read (the window ends, or the client's limiter sees it would); the next poll looks again
		case p.UID != uid || p.DeletionTimestamp != nil:
			return component + " pod " + pod + " was restarted while the rollout had to wait"
		}
	}
	return ""
}

// markPodNotReady sets pod's Ready condition to False, as the kubelet does
// when its container fails; KWOK's pod stages leave a Running pod's
// conditions alone, so the pod stays down until it is replaced.
func markPodNotReady(t *testing.T, env *framework.Env, pod string) {
	t.Helper()
	status := map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{Type: corev1.PodReady,
		Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}}}
	body, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kube.CoreV1().Pods(env.Namespace).Patch(env.Ctx, pod, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("pod %s NotReady: %v", pod, err)
	}
}
