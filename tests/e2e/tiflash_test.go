//go:build integration

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const tiflashTC = "tiflash"

// clusterFixture is one example cluster, name, running against the simulator.
type clusterFixture struct {
	env  *framework.Env
	pc   versioned.Interface
	sim  *simclient.Client
	name string
}

func (f *clusterFixture) get(ctx context.Context) (*v1alpha1.TidbCluster, error) {
	return f.pc.PingcapV1alpha1().TidbClusters(f.env.Namespace).Get(ctx, f.name, metav1.GetOptions{})
}

// waitReady waits until the cluster is Ready at its generation and extra holds.
func (f *clusterFixture) waitReady(t *testing.T, desc string, extra func(*v1alpha1.TidbCluster) bool) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		tc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		framework.Observef(ctx, "generation %d/%d ready=%+v tiflash=%d stores", tc.Status.ObservedGeneration, tc.Generation,
			ready, len(tc.Status.TiFlash.Stores))
		ok := ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation
		return ok && extra(tc), nil
	})
}

// patch merge-patches spec.<component> of the cluster with the JSON object value.
func (f *clusterFixture) patch(t *testing.T, component, value string) {
	t.Helper()
	body := []byte(`{"spec":{"` + component + `":` + value + `}}`)
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(f.env.Namespace).Patch(f.env.Ctx, f.name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch spec.%s: %v", component, err)
	}
}

func upTiFlash(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, s := range tc.Status.TiFlash.Stores {
		if s.State == "Up" {
			n++
		}
	}
	return n
}

// TestTiFlashScaleUpgradeAndFailover runs examples/tiflash: Ready with its
// two TiFlash stores (placement rules enabled first); 2→3→2 with the
// removed pod kept until its store is Tombstone, and a scale-in PD would
// refuse (a table with 3 TiFlash replicas) held back with a Warning; a
// version upgrade; a failover and its recovery.
func TestTiFlashScaleUpgradeAndFailover(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: tiflashTC}
	operator.StartManager(t, env.Namespace, func(o *app.Options) { o.Controller.TiFlashFailoverPeriod = time.Second })
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "tiflash", "tidb-cluster.yaml"), env.Namespace)
	f.waitReady(t, "examples/tiflash is Ready with 2 TiFlash stores Up", func(tc *v1alpha1.TidbCluster) bool {
		return upTiFlash(tc) == 2 && len(tc.Status.TiKV.Stores) == 1
	})
	st, err := f.sim.Cluster(env.Ctx, env.Namespace, tiflashTC)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Config.EnablePlacementRules {
		t.Error("TiFlash runs but PD's placement rules were never enabled")
	}

	f.patch(t, "tiflash", `{"replicas":3}`)
	f.waitReady(t, "3 TiFlash stores Up", func(tc *v1alpha1.TidbCluster) bool { return upTiFlash(tc) == 3 })

	// A table with 3 TiFlash replicas: PD would refuse to lose a store.
	if _, err := f.sim.SetTiFlashReplicas(env.Ctx, env.Namespace, tiflashTC, 101, 3); err != nil {
		t.Fatal(err)
	}
	f.patch(t, "tiflash", `{"replicas":2}`)
	waitEvent(t, env, corev1.EventTypeWarning, "FailedScaleIn", "a table has 3 TiFlash replicas")
	if tc, err := f.get(env.Ctx); err != nil || tc.Status.TiFlash.StatefulSet == nil || tc.Status.TiFlash.StatefulSet.Replicas != 3 {
		t.Fatalf("the refused scale-in removed a pod: %v %+v", err, tc.Status.TiFlash.StatefulSet)
	}
	violations := f.watchPodOutlives(t, tiflashTC+"-tiflash-2", tiflashStoreHeld(tiflashTC+"-tiflash-2"))
	if _, err := f.sim.SetTiFlashReplicas(env.Ctx, env.Namespace, tiflashTC, 101, 2); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, "back to 2 TiFlash stores, the third Tombstone", func(tc *v1alpha1.TidbCluster) bool {
		return upTiFlash(tc) == 2 && len(tc.Status.TiFlash.TombstoneStores) == 1 && tc.Status.TiFlash.StatefulSet.Replicas == 2
	})
	if v := violations(); v != "" {
		t.Error(v)
	}

	f.patch(t, "tiflash", `{"version":"v8.5.1"}`)
	f.waitReady(t, "TiFlash runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return strings.HasSuffix(tc.Status.TiFlash.Image, ":v8.5.1") && upTiFlash(tc) == 2 && f.podsRun(t, "tiflash", "v8.5.1", 2)
	})

	f.failover(t)
}

// failover takes TiFlash store of tiflash-1 Down: a failover store is
// added; once it is Up again and recovery is asked for, the extra store
// leaves through Tombstone.
func (f *clusterFixture) failover(t *testing.T) {
	t.Helper()
	f.patch(t, "tiflash", `{"maxFailoverCount":1}`)
	tc, err := f.get(f.env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var down uint64
	for id, s := range tc.Status.TiFlash.Stores {
		if s.PodName == tiflashTC+"-tiflash-1" {
			down, _ = strconv.ParseUint(id, 10, 64)
		}
	}
	if err := f.sim.SetStoreDown(f.env.Ctx, f.env.Namespace, tiflashTC, down, true); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, f.env.Ctx, readyTimeout, "a failover TiFlash store is added", func(ctx context.Context) (bool, error) {
		tc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		_, recorded := tc.Status.TiFlash.FailureStores[strconv.FormatUint(down, 10)]
		_, replaced := tc.Status.TiFlash.Stores[strconv.FormatUint(down, 10)]
		return recorded && replaced && tc.Status.TiFlash.StatefulSet != nil && tc.Status.TiFlash.StatefulSet.Replicas == 3 &&
			upTiFlash(tc) == 2 && len(tc.Status.TiFlash.Stores) == 3, nil
	})
	if err := f.sim.SetStoreDown(f.env.Ctx, f.env.Namespace, tiflashTC, down, false); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, f.env.Ctx, readyTimeout, "all 3 TiFlash stores Up again", func(ctx context.Context) (bool, error) {
		tc, err := f.get(ctx)
		return err == nil && upTiFlash(tc) == 3, err
	})
	violations := f.watchPodOutlives(t, tiflashTC+"-tiflash-2", tiflashStoreHeld(tiflashTC+"-tiflash-2"))
	f.patch(t, "tiflash", `{"recoverFailover":true}`)
	f.waitReady(t, "the failover store left through Tombstone once every store was Up", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.TiFlash.FailureStores) == 0 && tc.Status.TiFlash.StatefulSet.Replicas == 2 && upTiFlash(tc) == 2 &&
			len(tc.Status.TiFlash.TombstoneStores) == 2
	})
	if v := violations(); v != "" {
		t.Error(v)
	}
}

// watchPodOutlives samples, until the returned func is called, whether pod
// went (or is going) while the simulator still shows it holding something:
// held returns what (e.g. "its TiFlash store 5 was Up"), or "" when nothing
// is held. The pod is read before and after the simulator, so a record that
// disappears with its pod is caught too. It reports the first violation.
func (f *clusterFixture) watchPodOutlives(t *testing.T, pod string, held func(st *api.ClusterState) string) func() string {
	t.Helper()
	ctx, cancel := context.WithCancel(f.env.Ctx)
	var mu sync.Mutex
	violation := ""
	done := make(chan struct{})
	gone := func(ctx context.Context) bool {
		p, err := f.env.Kube.CoreV1().Pods(f.env.Namespace).Get(ctx, pod, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)
	}
	go func() {
		defer close(done)
		poll(ctx, func(ctx context.Context) bool {
			before := gone(ctx)
			st, err := f.sim.Cluster(ctx, f.env.Namespace, f.name)
			if err != nil {
				return true
			}
			what := held(st)
			if what == "" || (!before && !gone(ctx)) {
				return true
			}
			mu.Lock()
			violation = fmt.Sprintf("pod %s went while %s", pod, what)
			mu.Unlock()
			return false
		})
	}()
	return func() string {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return violation
	}
}

// tiflashStoreHeld says what TiFlash store of pod PD still has not Tombstone.
func tiflashStoreHeld(pod string) func(st *api.ClusterState) string {
	return func(st *api.ClusterState) string {
		for _, s := range st.Stores {
			if s.PodName == pod && s.Engine == "tiflash" && s.StateName != "Tombstone" {
				return fmt.Sprintf("its TiFlash store %d was %s", s.ID, s.StateName)
			}
		}
		return ""
	}
}

// waitEvent waits for an event of type (Normal, Warning) and reason whose
// message contains text.
func waitEvent(t *testing.T, env *framework.Env, eventType, reason, text string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, "event "+reason+" "+text, func(ctx context.Context) (bool, error) {
		evs, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Type == eventType && e.Reason == reason && strings.Contains(e.Message, text) {
				return true, nil
			}
		}
		return false, nil
	})
}

// podsRun reports whether n pods of the component run the tag.
func (f *clusterFixture) podsRun(t *testing.T, component, tag string, n int) bool {
	t.Helper()
	pods, err := f.env.Kube.CoreV1().Pods(f.env.Namespace).List(f.env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + f.name + ",app.kubernetes.io/component=" + component})
	if err != nil {
		return false
	}
	running := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podRunsTag(p, component, tag) {
			running++
		}
	}
	return running == n
}
