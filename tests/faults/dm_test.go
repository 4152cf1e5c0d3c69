//go:build integration

package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// dmSc is one running DMCluster scenario: examples/dm "basic" with its simulator, an in-process
// operator and the DM checker (checker_dm_test.go).
type dmSc struct {
	*sc
	chk     *dmChecker
	masters atomic.Int32 // the wanted dm-master replicas
}

// dmScenarios break a DMCluster's dm-master scale-in and upgrade.
func dmScenarios() []scenario {
	return []scenario{
		{name: "dm/kill-mid-master-scale-in", representative: true, // 14 s alone
			asserts: "5 dm-masters scaled to 3; operator context cancelled right after the first member delete is seen in dm-master; a new operator converges to 3 members",
			run:     runDMKillMidScaleIn},
		{name: "dm/master-api-5xx-during-upgrade",
			asserts: "dm-master's API answers 503 once the first dm-master pod of an upgrade restarted, for 10 operator requests after it met the fault; the partition does not move and no pod below it restarts meanwhile; converges after",
			run:     runDMMaster5xxDuringUpgrade},
		{name: "dm/worker-pod-deleted",
			asserts: "basic-dm-worker-0's pod deleted (as a user would) until recreated; converges with the worker registered again and never deleted from dm-master",
			run:     runDMWorkerPodDeleted},
	}
}

// startDM deploys examples/dm with masters dm-masters and waits until it is Ready; the DM checker
// runs from then until the scenario's cleanup.
func startDM(t *testing.T, masters int32) *dmSc {
	t.Helper()
	operator.InstallCRDs(t)
	s := &dmSc{sc: &sc{t: t, env: framework.NewEnv(t)}}
	s.pc = versioned.NewForConfigOrDie(s.env.Config)
	s.startSimulator()
	s.mgr = s.startManager()
	framework.ApplyYAMLFile(t, s.env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "dm", "dm-cluster.yaml"), s.env.Namespace)
	s.setMasters(masters)
	s.waitDM(fmt.Sprintf("the DMCluster is Ready with %d dm-masters", masters), nil)
	s.chk = newDMChecker(s.sim, s.env.Namespace, "basic", func() int { return int(s.masters.Load()) })
	if err := s.chk.start(s.env.Ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		checks, violations := s.chk.finish(context.Background())
		for _, v := range violations {
			t.Errorf("invariant violated: %s", v)
		}
		recordChecks(t, checks, len(violations))
	})
	return s
}

func (s *dmSc) setMasters(n int32) {
	s.masters.Store(n)
	s.patchDM(fmt.Sprintf(`{"spec":{"master":{"replicas":%d}}}`, n))
}

func (s *dmSc) patchDM(patch string) {
	s.t.Helper()
	if _, err := s.pc.PingcapV1alpha1().DMClusters(s.env.Namespace).Patch(s.env.Ctx, "basic", types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("patch DMCluster with %s: %v", patch, err)
	}
}

// waitDM waits until the DMCluster is Ready at its generation with the wanted dm-masters and one
// dm-worker, each synced and ready, every dm-master member alive in the simulator, and cond (if set).
func (s *dmSc) waitDM(desc string, cond func(*v1alpha1.DMCluster) bool) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		ok, why := s.dmConverged(ctx, cond)
		framework.Observef(ctx, "%s", why)
		return ok, nil
	})
}

func (s *dmSc) dmConverged(ctx context.Context, cond func(*v1alpha1.DMCluster) bool) (bool, string) {
	dc, err := s.pc.PingcapV1alpha1().DMClusters(s.env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	want := int(s.masters.Load())
	ready := meta.FindStatusCondition(dc.Status.Conditions, "Ready")
	m, w := dc.Status.Master, dc.Status.Worker
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != dc.Generation ||
		!m.Synced || len(m.Members) != want || m.StatefulSet == nil || m.StatefulSet.ReadyReplicas != int32(want) ||
		m.StatefulSet.Replicas != int32(want) || m.Phase != v1alpha1.NormalPhase ||
		!w.Synced || len(w.Members) != 1 || w.StatefulSet == nil || w.StatefulSet.ReadyReplicas != 1 {
		return false, fmt.Sprintf("generation %d ready=%+v master %+v worker %+v", dc.Generation, ready, m, w)
	}
	if cond != nil && !cond(dc) {
		return false, fmt.Sprintf("condition not met: master %+v worker %+v", m, w)
	}
	st, err := s.sim.DMCluster(ctx, s.env.Namespace, "basic")
	if err != nil {
		return false, err.Error()
	}
	alive := 0
	for _, mm := range st.Masters {
		if mm.Alive {
			alive++
		}
	}
	if len(st.Masters) != want || alive != want || st.Leader == "" {
		return false, fmt.Sprintf("simulated dm-master: leader %q masters %+v", st.Leader, st.Masters)
	}
	return true, ""
}

// waitDMSim waits until the simulated dm-master satisfies cond.
func (s *dmSc) waitDMSim(desc string, cond func(*api.DMClusterState) bool) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, desc, func(ctx context.Context) (bool, error) {
		st, err := s.sim.DMCluster(ctx, s.env.Namespace, "basic")
		if err != nil {
			framework.Observef(ctx, "simulator: %v", err)
			return false, nil
		}
		framework.Observef(ctx, "masters %+v deletes %+v faults %+v", st.Masters, st.Deletes, st.Faults)
		return cond(st), nil
	})
}

func runDMKillMidScaleIn(t *testing.T) {
	s := startDM(t, 5)
	s.setMasters(3)
	s.waitDMSim("the operator deletes a dm-master member", func(st *api.DMClusterState) bool {
		for _, d := range st.Deletes {
			if d.Kind == "master" && d.Seq > s.chk.fromSeq && d.Accepted {
				return true
			}
		}
		return false
	})
	s.restartManager()
	s.waitDM("3 dm-masters after the restart", nil)
	deleted := map[string]bool{}
	for _, d := range s.dmState().Deletes {
		if d.Kind == "master" && d.Accepted {
			deleted[d.Name] = true
		}
	}
	for _, pod := range []string{"basic-dm-master-3", "basic-dm-master-4"} {
		if !deleted[pod] {
			t.Errorf("%s was scaled in without a member delete through dm-master's API (deleted %v)", pod, deleted)
		}
	}
}

func runDMMaster5xxDuringUpgrade(t *testing.T) {
	s := startDM(t, 3)
	s.patchDM(`{"spec":{"version":"v8.5.8"}}`)
	// The fault starts once the first restarted pod is back, so that no restart is under way.
	s.waitSTS("dm-master", "the first dm-master pod restarted", func(sts *appsv1.StatefulSet) bool {
		return partitionMoved(sts) && sts.Status.UpdatedReplicas >= 1
	})
	f, err := s.sim.AddDMFault(s.env.Ctx, s.env.Namespace, "basic", api.Fault{Kind: api.FaultError, Component: "dm-master", Status: 503, Body: "injected"})
	if err != nil {
		t.Fatal(err)
	}
	// A sync that observed dm-master before the fault may still restart a pod: the baseline is
	// taken once the operator has met the fault, the end after 10 more failed requests.
	s.waitFaultHits(f.ID, 3)
	partition, before := s.masterRollout()
	s.waitFaultHits(f.ID, 13)
	after, pods := s.masterRollout()
	if err := s.sim.ClearDMFaults(s.env.Ctx, s.env.Namespace, "basic"); err != nil {
		t.Fatal(err)
	}
	if after < partition {
		t.Errorf("the dm-master partition moved %d → %d while dm-master answered 503", partition, after)
	}
	for pod, uid := range before {
		if ordinalOf(pod) < int(partition) && pods[pod] != uid {
			t.Errorf("dm-master pod %s restarted while dm-master answered 503 (uid %s → %q)", pod, uid, pods[pod])
		}
	}
	s.waitDM("the upgrade finishes once dm-master answers", func(dc *v1alpha1.DMCluster) bool {
		return dc.Status.Master.Image == "pingcap/dm:v8.5.8" && dc.Status.Worker.Image == "pingcap/dm:v8.5.8"
	})
}

// waitFaultHits waits until the dm-master fault id has answered n requests.
func (s *dmSc) waitFaultHits(id string, n int) {
	s.t.Helper()
	s.waitDMSim(fmt.Sprintf("the operator meets %d failed dm-master requests", n), func(st *api.DMClusterState) bool {
		for _, x := range st.Faults {
			if x.ID == id {
				return x.Hits >= n
			}
		}
		return false
	})
}

// masterRollout returns the dm-master StatefulSet's partition and the UID of each of its pods that
// is not terminating.
func (s *dmSc) masterRollout() (int32, map[string]types.UID) {
	s.t.Helper()
	sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(s.env.Ctx, "basic-dm-master", metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	partition := int32(0)
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = *ru.Partition
	}
	pods, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).List(s.env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component=dm-master"})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && strings.HasPrefix(p.Name, "basic-dm-master-") {
			out[p.Name] = p.UID
		}
	}
	return partition, out
}

func (s *dmSc) dmState() *api.DMClusterState {
	s.t.Helper()
	st, err := s.sim.DMCluster(s.env.Ctx, s.env.Namespace, "basic")
	if err != nil {
		s.t.Fatalf("simulated dm-master: %v", err)
	}
	return st
}

func runDMWorkerPodDeleted(t *testing.T) {
	s := startDM(t, 3)
	s.deleteDMWorkerPod()
	s.waitDMSim("basic-dm-worker-0 registered and free again", func(st *api.DMClusterState) bool {
		for _, w := range st.Workers {
			if w.Name == "basic-dm-worker-0" {
				return w.Stage == "free"
			}
		}
		return false
	})
	s.waitDM("converged after the dm-worker pod came back", nil)
	for _, d := range s.dmState().Deletes {
		if d.Kind == "worker" && d.Seq > s.chk.fromSeq {
			t.Errorf("the wanted dm-worker was deleted from dm-master: %+v", d)
		}
	}
}

// deleteDMWorkerPod deletes basic-dm-worker-0 as a user would and waits until its StatefulSet
// recreated it.
func (s *dmSc) deleteDMWorkerPod() {
	s.t.Helper()
	const pod = "basic-dm-worker-0"
	pods := s.env.Kube.CoreV1().Pods(s.env.Namespace)
	p, err := pods.Get(s.env.Ctx, pod, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", pod, err)
	}
	if err := pods.Delete(s.env.Ctx, pod, metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("delete pod %s: %v", pod, err)
	}
	s.waitRecreated(pod+" recreated", p.UID, func(ctx context.Context) (types.UID, error) {
		p, err := pods.Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return p.UID, nil
	})
}
