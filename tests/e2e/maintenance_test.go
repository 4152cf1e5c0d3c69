//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// annotatePod sets (value non-nil) or removes (nil) annotations of a pod
// of basic, as `kubectl annotate` does.
func annotatePod(t *testing.T, env *framework.Env, pod string, annotations map[string]*string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kube.CoreV1().Pods(env.Namespace).Patch(env.Ctx, pod, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("annotate %s: %v", pod, err)
	}
}

// storeOf returns the simulated store of pod.
func storeOf(st *api.ClusterState, pod string) (api.Store, bool) {
	for _, s := range st.Stores {
		if s.PodName == pod && s.StateName != "Tombstone" {
			return s, true
		}
	}
	return api.Store{}, false
}

// evictRecord returns basic's status.tikv.evictLeader record of pod.
func evictRecord(t *testing.T, env *framework.Env, pc versioned.Interface, pod string) *v1alpha1.EvictLeaderStatus {
	t.Helper()
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tc.Status.TiKV.EvictLeader[pod]
}

// deletionWatch follows one pod until it is deleted or replaced, noting
// whether its store was seen under leader eviction first. (Whether the
// store still held leaders when the pod went is the simulator's record,
// Store.LostLeaders: a sampler of two sources would race the deletion.)
type deletionWatch struct {
	mu          sync.Mutex
	uid         types.UID
	sawEvicting bool
	replaced    bool
}

func (w *deletionWatch) run(ctx context.Context, env *framework.Env, sim *simclient.Client, pod string) {
	poll(ctx, func(ctx context.Context) bool {
		st, err := sim.Cluster(ctx, env.Namespace, "basic")
		if err != nil {
			return ctx.Err() == nil
		}
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, pod, metav1.GetOptions{})
		w.mu.Lock()
		defer w.mu.Unlock()
		if s, ok := storeOf(st, pod); ok && s.Evicting {
			w.sawEvicting = true
		}
		switch {
		case apierrors.IsNotFound(err) || (err == nil && (p.UID != w.uid || p.DeletionTimestamp != nil)):
			w.replaced = true
			return false
		case err != nil:
			return ctx.Err() == nil
		}
		return true
	})
}

func TestTiKVEvictLeaderAnnotation(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	// none: leaders leave the store and stay away while the annotation is set.
	annotatePod(t, env, "basic-tikv-1", map[string]*string{label.AnnTiKVEvictLeader: ptr.To(label.EvictLeaderNone)})
	waitSim(t, env, sim, "store of basic-tikv-1 evicted to 0 leaders", func(st *api.ClusterState) bool {
		s, ok := storeOf(st, "basic-tikv-1")
		return ok && s.Evicting && s.LeaderCount == 0
	})
	framework.WaitFor(t, env.Ctx, readyTimeout, "status.tikv.evictLeader records basic-tikv-1", func(context.Context) (bool, error) {
		r := evictRecord(t, env, pc, "basic-tikv-1")
		return r != nil && r.Value == label.EvictLeaderNone && !r.BeginTime.IsZero(), nil
	})
	waitEvent(t, env, corev1.EventTypeNormal, tikv.ReasonEvictLeaderBegin, "basic-tikv-1")
	annotatePod(t, env, "basic-tikv-1", map[string]*string{label.AnnTiKVEvictLeader: nil})
	waitSim(t, env, sim, "eviction of basic-tikv-1 ended and leaders returned", func(st *api.ClusterState) bool {
		s, ok := storeOf(st, "basic-tikv-1")
		return ok && !s.Evicting && s.LeaderCount > 0
	})
	waitEvent(t, env, corev1.EventTypeNormal, tikv.ReasonEvictLeaderEnd, "basic-tikv-1")
	waitReady(t, env, pc, "record of basic-tikv-1 dropped", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.TiKV.EvictLeader == nil
	})

	// delete-pod: the pod goes only once its store holds no leader; the
	// eviction ends once the recreated pod is Ready.
	old, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "basic-tikv-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := &deletionWatch{uid: old.UID}
	watchCtx, stop := context.WithTimeout(env.Ctx, readyTimeout)
	defer stop()
	done := make(chan struct{})
	go func() { defer close(done); w.run(watchCtx, env, sim, "basic-tikv-2") }()
	annotatePod(t, env, "basic-tikv-2", map[string]*string{label.AnnTiKVEvictLeader: ptr.To(label.EvictLeaderDeletePod)})
	<-done
	w.mu.Lock()
	if !w.replaced || !w.sawEvicting {
		t.Errorf("basic-tikv-2 replaced=%v, its store seen evicting=%v; want both", w.replaced, w.sawEvicting)
	}
	w.mu.Unlock()
	waitReady(t, env, pc, "basic-tikv-2 recreated and the eviction ended", func(tc *v1alpha1.TidbCluster) bool {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "basic-tikv-2", metav1.GetOptions{})
		return err == nil && p.UID != old.UID && tc.Status.TiKV.EvictLeader == nil
	})
	st, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	// The simulator records the leaders a store held when its pod stopped:
	// none, since the pod went only once its store had shed them.
	if s, ok := storeOf(st, "basic-tikv-2"); !ok || s.Evicting || s.LostLeaders != 0 {
		t.Errorf("store of the recreated basic-tikv-2: %+v, want it present, not evicting, and no leader lost when its pod stopped", s)
	}

	// An expired request is removed from the pod and its eviction ends.
	expiry := time.Now().Add(20 * time.Second).UTC().Format(time.RFC3339)
	annotatePod(t, env, "basic-tikv-0", map[string]*string{label.AnnTiKVEvictLeader: ptr.To(label.EvictLeaderNone),
		label.AnnTiKVEvictLeaderExpiration: ptr.To(expiry)})
	waitSim(t, env, sim, "store of basic-tikv-0 evicting", func(st *api.ClusterState) bool {
		s, ok := storeOf(st, "basic-tikv-0")
		return ok && s.Evicting
	})
	framework.WaitFor(t, env.Ctx, readyTimeout, "expired evict-leader annotations removed from basic-tikv-0", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "basic-tikv-0", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, a := p.Annotations[label.AnnTiKVEvictLeader]
		_, b := p.Annotations[label.AnnTiKVEvictLeaderExpiration]
		return !a && !b, nil
	})
	waitSim(t, env, sim, "eviction of basic-tikv-0 ended after expiry", func(st *api.ClusterState) bool {
		s, ok := storeOf(st, "basic-tikv-0")
		return ok && !s.Evicting
	})
}

// podUID returns the UID of a pod of basic.
func podUID(t *testing.T, env *framework.Env, name string) types.UID {
	t.Helper()
	p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.UID
}

// waitReplaced waits until basic is Ready again with pod name replaced
// (a UID other than old).
func waitReplaced(t *testing.T, env *framework.Env, pc versioned.Interface, name string, old types.UID) {
	t.Helper()
	waitReady(t, env, pc, name+" replaced", func(*v1alpha1.TidbCluster) bool {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
		return err == nil && p.UID != old && p.DeletionTimestamp == nil
	})
}

func TestPDTransferLeaderAndTiDBGracefulShutdownAnnotations(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	// delete-pod on the PD leader: leadership moves through PD's API, then
	// the pod goes.
	before, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	leader := before.Leader
	uid := podUID(t, env, leader)
	annotatePod(t, env, leader, map[string]*string{label.AnnPDTransferLeader: ptr.To(label.EvictLeaderDeletePod)})
	waitReplaced(t, env, pc, leader, uid)
	after, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	checkLeaderTransferredBeforeRestart(t, before, after)
	waitEvent(t, env, corev1.EventTypeNormal, pd.ReasonLeaderTransferred, "moved from "+leader)

	// none on the new leader: leadership moves, the pod stays.
	leader = after.Leader
	uid = podUID(t, env, leader)
	annotatePod(t, env, leader, map[string]*string{label.AnnPDTransferLeader: ptr.To(label.EvictLeaderNone)})
	waitSim(t, env, sim, "leadership moved off "+leader, func(st *simState) bool { return st.Leader != "" && st.Leader != leader })
	if got := podUID(t, env, leader); got != uid {
		t.Errorf("%s was replaced for pd-transfer-leader=none", leader)
	}

	// TiDB graceful shutdown: only the annotated pod is replaced.
	uids := podUIDs(t, env, "tidb")
	annotatePod(t, env, "basic-tidb-0", map[string]*string{label.AnnTiDBGracefulShutdown: ptr.To(label.EvictLeaderDeletePod)})
	waitReplaced(t, env, pc, "basic-tidb-0", uids["basic-tidb-0"])
	if got := podUID(t, env, "basic-tidb-1"); got != uids["basic-tidb-1"] {
		t.Error("basic-tidb-1 was replaced without the annotation")
	}
	waitEvent(t, env, corev1.EventTypeNormal, "SuccessfulDelete", "basic-tidb-0")
}

// readySince is when pod's Ready condition last turned true.
func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func TestMinReadySecondsSpacesTiDBRestarts(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	const minReady = 15 * time.Second
	body := []byte(`{"metadata":{"annotations":{"tidb.pingcap.com/tidb-min-ready-seconds":"15"}}}`)
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	before := podUIDs(t, env, "tidb")
	patchSpec(t, env, pc, map[string]any{"tidb": map[string]any{"version": "v8.5.1"}})
	waitReady(t, env, pc, "every TiDB pod runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return imagesAre(env, "tidb", "v8.5.1")(tc) && tc.Status.TiDB.Phase == v1alpha1.NormalPhase
	})
	first, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "basic-tidb-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "basic-tidb-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.UID == before["basic-tidb-1"] || second.UID == before["basic-tidb-0"] {
		t.Fatal("the TiDB pods were not both restarted")
	}
	// The second restart began (its pod was created) only once the first
	// restarted pod had been Ready for min-ready-seconds; timestamps have
	// second precision.
	gap := second.CreationTimestamp.Sub(readySince(first))
	if readySince(first).IsZero() || gap < minReady-time.Second {
		t.Errorf("basic-tidb-0 was recreated %v after basic-tidb-1 became Ready, want at least %v", gap, minReady)
	}
}
