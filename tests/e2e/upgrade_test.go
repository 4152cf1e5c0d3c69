//go:build integration

package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// podUIDs maps each pod of a component to its UID.
func podUIDs(t *testing.T, env *framework.Env, component string) map[string]types.UID {
	t.Helper()
	pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component=" + component})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}

func imagesAre(env *framework.Env, component, tag string) func(*v1alpha1.TidbCluster) bool {
	return func(*v1alpha1.TidbCluster) bool {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(env.Ctx, metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component=" + component})
		if err != nil || len(pods.Items) == 0 {
			return false
		}
		for _, p := range pods.Items {
			if !podRunsTag(p, component, tag) {
				return false
			}
		}
		return true
	}
}

func podRunsTag(p corev1.Pod, container, tag string) bool {
	for _, c := range p.Spec.Containers {
		if c.Name == container {
			return strings.HasSuffix(c.Image, ":"+tag)
		}
	}
	return false
}

func TestRollingUpgradeTransfersLeaderAndEvictsLeaders(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	before := map[string]map[string]types.UID{}
	for _, c := range []string{"pd", "tikv", "tidb"} {
		before[c] = podUIDs(t, env, c)
	}

	initial, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}

	watchCtx, stop := context.WithCancel(env.Ctx)
	w := &watchInvariants{}
	done := make(chan struct{})
	go func() { defer close(done); w.run(watchCtx, env, sim) }()
	patchSpec(t, env, pc, map[string]any{"version": "v8.5.1"})
	waitReady(t, env, pc, "every pod runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return imagesAre(env, "pd", "v8.5.1")(tc) && imagesAre(env, "tikv", "v8.5.1")(tc) && imagesAre(env, "tidb", "v8.5.1")(tc) &&
			tc.Status.PD.Phase == v1alpha1.NormalPhase && tc.Status.TiKV.Phase == v1alpha1.NormalPhase && tc.Status.TiDB.Phase == v1alpha1.NormalPhase
	})
	stop()
	<-done
	w.check(t)
	for c, uids := range before {
		for pod, uid := range podUIDs(t, env, c) {
			if uids[pod] == uid {
				t.Errorf("%s pod %s was not restarted by the upgrade", c, pod)
			}
		}
	}
	if !w.evicted {
		t.Error("no TiKV store was seen evicting leaders during the rollout")
	}
	if len(w.leaders) < 2 {
		t.Errorf("the PD leader never moved during the rollout: %v", w.leaders)
	}
	rolled, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	checkLeaderTransferredBeforeRestart(t, initial, rolled)
	checkNoStoreRestartedWithLeaders(t, initial, rolled)
	// Every step of the rollout is told in events.
	for _, c := range []string{"pd", "tikv", "tidb"} {
		waitEvent(t, env, corev1.EventTypeNormal, component.ReasonRollingUpdateStarted, c+" rolling update")
		waitEvent(t, env, corev1.EventTypeNormal, component.ReasonRollingUpdateFinished, c+" rolling update")
	}
	waitEvent(t, env, corev1.EventTypeNormal, tikv.ReasonEvictLeaderBegin, "basic-tikv-")
	waitEvent(t, env, corev1.EventTypeNormal, tikv.ReasonEvictLeaderEnd, "basic-tikv-")
	waitEvent(t, env, corev1.EventTypeNormal, pd.ReasonLeaderTransferred, "basic-pd-")
	st, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Schedulers {
		if strings.HasPrefix(s, "evict-leader-scheduler") {
			t.Errorf("evict-leader scheduler left behind: %s", s)
		}
	}
}

func TestConfigChangeRollsOnlyThatComponent(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	pd, tikv, tidb := podUIDs(t, env, "pd"), podUIDs(t, env, "tikv"), podUIDs(t, env, "tidb")

	patchSpec(t, env, pc, map[string]any{"tidb": map[string]any{"config": map[string]any{"log": map[string]any{"level": "warn"}}}})
	waitReady(t, env, pc, "TiDB pods restarted on the new config", func(*v1alpha1.TidbCluster) bool {
		now := podUIDs(t, env, "tidb")
		for pod, uid := range tidb {
			if now[pod] == uid || now[pod] == "" {
				return false
			}
		}
		return true
	})
	for name, want := range map[string]map[string]types.UID{"pd": pd, "tikv": tikv} {
		got := podUIDs(t, env, name)
		for pod, uid := range want {
			if got[pod] != uid {
				t.Errorf("%s pod %s restarted although its config did not change", name, pod)
			}
		}
	}
	cms, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).List(env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component=tidb"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cm := range cms.Items {
		found = found || strings.Contains(cm.Data["config-file"], `level = 'warn'`) || strings.Contains(cm.Data["config-file"], `level = "warn"`)
	}
	if !found {
		t.Errorf("no TiDB ConfigMap holds the new log level")
	}
}

// checkLeaderTransferredBeforeRestart proves from the simulator's leader
// history that the PD leader's pod was restarted only after leadership had
// moved off it through PD's transfer API: every leader change since before
// the rollout is a transfer (an election would mean a leader's pod stopped
// while it still led, which the simulator answers with a re-election, so
// the rollout would look the same without the transfer), and one moved
// leadership off the leader of before the rollout, whose pod restarted.
func checkLeaderTransferredBeforeRestart(t *testing.T, before, after *simState) {
	t.Helper()
	var last uint64
	if n := len(before.LeaderChanges); n > 0 {
		last = before.LeaderChanges[n-1].Seq
	}
	movedOff := false
	for _, c := range after.LeaderChanges {
		if c.Seq <= last {
			continue
		}
		if c.Cause != api.LeaderCauseTransfer {
			t.Errorf("PD leader change %d during the rollout was not a transfer: %+v", c.Seq, c)
		}
		movedOff = movedOff || (c.From == before.Leader && c.Cause == api.LeaderCauseTransfer)
	}
	if before.Leader == "" || !movedOff {
		t.Errorf("leadership never moved off %q through PD's transfer API; changes: %+v", before.Leader, after.LeaderChanges)
	}
}

// checkNoStoreRestartedWithLeaders fails for a TiKV store whose pod stopped
// while it still led regions during the rollout (the simulator records the
// leaders a store held when its pod stopped): every restart must wait for
// the eviction to empty the store. Every store led regions before, so the
// eviction was needed.
func checkNoStoreRestartedWithLeaders(t *testing.T, before, after *simState) {
	t.Helper()
	for _, s := range before.Stores {
		if s.Engine == "tikv" && s.LeaderCount == 0 {
			t.Errorf("store %d (%s) led no region before the rollout; the test proves nothing for it", s.ID, s.PodName)
		}
	}
	restarted := 0
	for _, s := range after.Stores {
		if s.Engine != "tikv" {
			continue
		}
		restarted++
		if s.LostLeaders > 0 {
			t.Errorf("the pod of store %d (%s) stopped while the store led %d regions", s.ID, s.PodName, s.LostLeaders)
		}
	}
	if restarted < 3 {
		t.Errorf("%d TiKV stores after the rollout, want 3", restarted)
	}
}
