//go:build integration

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// dmFixture drives one DMCluster of a test namespace.
type dmFixture struct {
	env  *framework.Env
	pc   versioned.Interface
	sim  *simclient.Client
	name string
}

func (f *dmFixture) get(ctx context.Context) (*v1alpha1.DMCluster, error) {
	return f.pc.PingcapV1alpha1().DMClusters(f.env.Namespace).Get(ctx, f.name, metav1.GetOptions{})
}

func (f *dmFixture) patch(t *testing.T, patch string) {
	t.Helper()
	if _, err := f.pc.PingcapV1alpha1().DMClusters(f.env.Namespace).Patch(f.env.Ctx, f.name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch DMCluster with %s: %v", patch, err)
	}
}

// waitReady waits for the Ready condition and cond on the DMCluster.
func (f *dmFixture) waitReady(t *testing.T, desc string, cond func(*v1alpha1.DMCluster) bool) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		dc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(dc.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == dc.Generation && cond(dc), nil
	})
}

func (f *dmFixture) state(t *testing.T) *api.DMClusterState {
	t.Helper()
	st, err := f.sim.DMCluster(f.env.Ctx, f.env.Namespace, f.name)
	if err != nil {
		t.Fatalf("simulator state of DMCluster %s: %v", f.name, err)
	}
	return st
}

func dmCounts(masters, workers int) func(*v1alpha1.DMCluster) bool {
	return func(dc *v1alpha1.DMCluster) bool {
		return dc.Status.Master.Synced && len(dc.Status.Master.Members) == masters &&
			dc.Status.Worker.Synced && len(dc.Status.Worker.Members) == workers &&
			dc.Status.Master.StatefulSet != nil && dc.Status.Master.StatefulSet.ReadyReplicas == int32(masters) &&
			dc.Status.Worker.StatefulSet != nil && dc.Status.Worker.StatefulSet.ReadyReplicas == int32(workers)
	}
}

// TestDMExampleReadyScalesThroughTheMemberAPI applies the v1.6 examples/dm
// DMCluster unchanged: it reaches Ready with v1.6's object names and ports;
// dm-master scales 1→3→1, each scaled-in member deleted from dm-master
// before its pod goes, and dm-worker 1→2→1, the offline worker deleted
// from dm-master after its pod went.
func TestDMExampleReadyScalesThroughTheMemberAPI(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &dmFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "basic"}
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "dm", "dm-cluster.yaml"), env.Namespace)
	f.waitReady(t, "the DM example is Ready with 1 dm-master and 1 dm-worker", dmCounts(1, 1))
	f.checkObjects(t)
	f.waitRetained(t, "dm-master-basic-dm-master-0")
	if dc, err := f.get(env.Ctx); err != nil {
		t.Fatal(err)
	} else if c := meta.FindStatusCondition(dc.Status.Conditions, "Unsupported"); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("the v1.6 example sets fields named not acted on: %s", c.Message)
	}

	f.patch(t, `{"spec":{"master":{"replicas":3}}}`)
	f.waitReady(t, "3 dm-masters", dmCounts(3, 1))
	f.patch(t, `{"spec":{"master":{"replicas":5}}}`)
	f.waitReady(t, "5 dm-masters", dmCounts(5, 1))
	f.patch(t, `{"spec":{"master":{"replicas":3}}}`)
	f.waitReady(t, "back to 3 dm-masters", dmCounts(3, 1))
	deleted := map[string]bool{}
	for _, d := range f.state(t).Deletes {
		if d.Kind == "master" && d.Accepted {
			deleted[d.Name] = true
		}
	}
	for _, pod := range []string{"basic-dm-master-3", "basic-dm-master-4"} {
		if !deleted[pod] {
			t.Errorf("%s was scaled in without a member delete through dm-master's API (deletes %v)", pod, f.state(t).Deletes)
		}
	}

	f.patch(t, `{"spec":{"worker":{"replicas":2}}}`)
	f.waitReady(t, "2 dm-workers", dmCounts(3, 2))
	f.patch(t, `{"spec":{"worker":{"replicas":3}}}`)
	f.waitReady(t, "3 dm-workers", dmCounts(3, 3))
	f.patch(t, `{"spec":{"worker":{"replicas":2}}}`)
	f.waitReady(t, "back to 2 dm-workers, the offline one deleted", dmCounts(3, 2))
	found := false
	for _, d := range f.state(t).Deletes {
		found = found || (d.Kind == "worker" && d.Name == "basic-dm-worker-2" && d.Accepted)
	}
	if !found {
		t.Errorf("the scaled-in worker was never deleted from dm-master (deletes %v)", f.state(t).Deletes)
	}
}

// TestDMMasterFailoverReplacesAnUnhealthyMember marks one of 3 dm-masters
// unhealthy past the failover period: it is recorded, deleted from
// dm-master with its pod and PVC, and rebuilt as a new member; the
// failure is then recovered and the StatefulSet is back at 3 pods.
func TestDMMasterFailoverReplacesAnUnhealthyMember(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &dmFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "basic"}
	operator.StartManager(t, env.Namespace, func(o *app.Options) { o.Controller.DMMasterFailoverPeriod = time.Second })
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "dm", "dm-cluster.yaml"), env.Namespace)
	f.patch(t, `{"spec":{"master":{"replicas":3,"maxFailoverCount":1}}}`)
	f.waitReady(t, "3 dm-masters", dmCounts(3, 1))
	before, err := f.get(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldID := before.Status.Master.Members["basic-dm-master-1"].ID
	if err := f.sim.SetDMMasterUnhealthy(env.Ctx, env.Namespace, f.name, "basic-dm-master-1", true); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic-dm-master-1 rebuilt as a new member", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=DMMasterMemberDeleted"})
		if err != nil {
			return false, err
		}
		dc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		m := dc.Status.Master.Members["basic-dm-master-1"]
		return len(events.Items) > 0 && m.ID != "" && m.ID != oldID && m.Health, nil
	})
	f.waitReady(t, "dm-master recovers with three healthy members", func(dc *v1alpha1.DMCluster) bool {
		return dmCounts(3, 1)(dc) && len(dc.Status.Master.FailureMembers) == 0 && dc.Status.Master.StatefulSet.Replicas == 3
	})
}

// waitRetained waits for the PV bound to pvc to carry pvReclaimPolicy Retain.
func (f *dmFixture) waitRetained(t *testing.T, pvc string) {
	t.Helper()
	framework.WaitFor(t, f.env.Ctx, readyTimeout, "the PV of "+pvc+" is retained", func(ctx context.Context) (bool, error) {
		claim, err := f.env.Kube.CoreV1().PersistentVolumeClaims(f.env.Namespace).Get(ctx, pvc, metav1.GetOptions{})
		if err != nil || claim.Spec.VolumeName == "" {
			return false, err
		}
		pv, err := f.env.Kube.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain, nil
	})
}

// checkObjects checks the names, ports and selectors v1.6 gives a DM cluster.
func (f *dmFixture) checkObjects(t *testing.T) {
	t.Helper()
	ctx, ns, kube := f.env.Ctx, f.env.Namespace, f.env.Kube
	services := map[string]struct {
		port     int32
		headless bool
	}{"basic-dm-master": {8261, false}, "basic-dm-master-peer": {8291, true}, "basic-dm-worker-peer": {8262, true},
		"basic-dm-discovery": {10261, false}}
	for name, want := range services {
		svc, err := kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Service %s: %v", name, err)
			continue
		}
		if len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].Port != want.port {
			t.Errorf("Service %s ports %v, want %d first", name, svc.Spec.Ports, want.port)
		}
		if headless := svc.Spec.ClusterIP == corev1.ClusterIPNone; headless != want.headless {
			t.Errorf("Service %s headless=%v, want %v", name, headless, want.headless)
		}
	}
	for name, component := range map[string]string{"basic-dm-master": "dm-master", "basic-dm-worker": "dm-worker"} {
		sts, err := kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("StatefulSet %s: %v", name, err)
			continue
		}
		checkDMSelector(t, sts, component)
	}
	if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "basic-dm-discovery", metav1.GetOptions{}); err != nil {
		t.Errorf("discovery Deployment: %v", err)
	}
	for _, pvc := range []string{"dm-master-basic-dm-master-0", "dm-worker-basic-dm-worker-0"} {
		if _, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvc, metav1.GetOptions{}); err != nil {
			t.Errorf("PVC %s: %v", pvc, err)
		}
	}
}

func checkDMSelector(t *testing.T, sts *appsv1.StatefulSet, component string) {
	t.Helper()
	want := map[string]string{"app.kubernetes.io/name": "dm-cluster", "app.kubernetes.io/managed-by": "tidb-operator",
		"app.kubernetes.io/instance": "basic", "app.kubernetes.io/component": component}
	if got := sts.Spec.Selector.MatchLabels; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("StatefulSet %s selects %v, want %v", sts.Name, got, want)
	}
}

// TestDMUpgradeEvictsTheLeaderBeforeItRestarts upgrades a DM cluster of 3
// dm-masters beside the basic TidbCluster of the same name: every
// dm-master pod restarts once with the new image, the leader's pod only
// after dm-master accepted the eviction of its leadership to another
// member, and no pod of the TidbCluster restarts.
func TestDMUpgradeEvictsTheLeaderBeforeItRestarts(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &dmFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "basic"}
	operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "dm", "dm-cluster.yaml"), env.Namespace)
	deployBasic(t, env)
	f.patch(t, `{"spec":{"master":{"replicas":3}}}`)
	f.waitReady(t, "3 dm-masters", dmCounts(3, 1))
	tcPods := f.tidbClusterPods(t)
	leader := f.state(t).Leader
	if leader == "" {
		t.Fatal("no dm-master leader before the upgrade")
	}
	f.patch(t, `{"spec":{"version":"v8.5.8"}}`)
	f.waitReady(t, "every dm-master and dm-worker runs v8.5.8", func(dc *v1alpha1.DMCluster) bool {
		return dmCounts(3, 1)(dc) && dc.Status.Master.Image == "pingcap/dm:v8.5.8" && dc.Status.Worker.Image == "pingcap/dm:v8.5.8" &&
			dc.Status.Master.Phase == v1alpha1.NormalPhase
	})
	st := f.state(t)
	var started *metav1.Time
	for _, m := range st.Masters {
		if m.Name == leader && m.StartedAt != nil {
			started = &metav1.Time{Time: *m.StartedAt}
		}
	}
	if started == nil {
		t.Fatalf("the old leader %s is not a running member after the upgrade: %+v", leader, st.Masters)
	}
	evicted := false
	for _, e := range st.Evictions {
		evicted = evicted || (e.Pod == leader && e.WasLeader && e.Accepted && e.NewLeader != leader && e.At.Before(started.Time))
	}
	if !evicted {
		t.Errorf("the leader %s restarted (at %v) without an accepted eviction before: %+v", leader, started, st.Evictions)
	}
	if after := f.tidbClusterPods(t); fmt.Sprint(after) != fmt.Sprint(tcPods) {
		t.Errorf("the DM upgrade restarted pods of the TidbCluster beside it: %v, then %v", tcPods, after)
	}
}

// tidbClusterPods are the TidbCluster basic's pods, by name, with their UIDs.
func (f *dmFixture) tidbClusterPods(t *testing.T) map[string]types.UID {
	t.Helper()
	list, err := f.env.Kube.CoreV1().Pods(f.env.Namespace).List(f.env.Ctx,
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tidb-cluster,app.kubernetes.io/instance=basic"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range list.Items {
		out[p.Name] = p.UID
	}
	if len(out) == 0 {
		t.Fatal("the TidbCluster beside the DM cluster has no pods")
	}
	return out
}

// TestDMWorkerFailoverAddsAPodAndRecovers holds a deleted dm-worker pod in
// Terminating (a finalizer) so that dm-master reports the worker offline
// past the failover period: failover records it and adds an extra worker;
// once the pod is back, recoverFailover removes the extra worker again.
func TestDMWorkerFailoverAddsAPodAndRecovers(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &dmFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "basic"}
	operator.StartManager(t, env.Namespace, func(o *app.Options) { o.Controller.DMWorkerFailoverPeriod = time.Second })
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "dm", "dm-cluster.yaml"), env.Namespace)
	f.patch(t, `{"spec":{"worker":{"maxFailoverCount":1,"recoverFailover":true}}}`)
	f.waitReady(t, "1 dm-master and 1 dm-worker", dmCounts(1, 1))

	pods := env.Kube.CoreV1().Pods(env.Namespace)
	hold := []byte(`{"metadata":{"finalizers":["kubetidb.test/hold"]}}`)
	if _, err := pods.Patch(env.Ctx, "basic-dm-worker-0", types.MergePatchType, hold, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(env.Ctx, "basic-dm-worker-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "the offline worker failed over to an extra pod", func(ctx context.Context) (bool, error) {
		dc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		_, failed := dc.Status.Worker.FailureMembers["basic-dm-worker-0"]
		sts := dc.Status.Worker.StatefulSet
		return failed && dc.Status.Worker.FailoverUID != "" && sts != nil && sts.Replicas == 2 &&
			dc.Status.Worker.Members["basic-dm-worker-1"].Stage == v1alpha1.DMWorkerStateFree, nil
	})
	if _, err := pods.Patch(env.Ctx, "basic-dm-worker-0", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, "the failover recovered: one worker again", func(dc *v1alpha1.DMCluster) bool {
		return dmCounts(1, 1)(dc) && len(dc.Status.Worker.FailureMembers) == 0 && dc.Status.Worker.StatefulSet.Replicas == 1
	})
}
