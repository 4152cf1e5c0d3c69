//go:build integration

package faults

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/v1layout/v1objects"
)

// invTakeoverNoRestart: while the operator takes over a cluster the TiDB Operator v1.6 laid out, no
// pod of it is deleted.
const invTakeoverNoRestart invariant = "takeover-no-restart"

// basicPods is how many pods examples/basic runs: 3 PD, 3 TiKV, 2 TiDB and discovery.
const basicPods = 9

// setTakeover turns takeover-no-restart on (a takeover runs) or off.
func (c *checker) setTakeover(on bool) {
	c.mu.Lock()
	c.takeover = on
	c.mu.Unlock()
}

// onTakeoverPod judges a pod seen deleting for the first time while a takeover runs.
func (c *checker) onTakeoverPod(pod *corev1.Pod) {
	c.mu.Lock()
	on := c.takeover
	c.mu.Unlock()
	if on {
		c.check(invTakeoverNoRestart, false, "pod %s (UID %s) deleted during the takeover", pod.Name, pod.UID)
	}
}

// takeoverScenarios: a v1.6 layout of examples/basic taken over, the operator killed mid-way.
func takeoverScenarios() []scenario {
	return []scenario{{name: "takeover/kill-mid-takeover",
		asserts: "examples/basic laid out as the TiDB Operator v1.6 does (no operator running) until its pods are Ready; our operator starts and is cancelled once it took over the first StatefulSet (v1's last-applied annotation gone); a new one finishes: no pod deleted meanwhile (`takeover-no-restart`), every pod's UID kept, no v1 annotation left on the StatefulSets",
		run:     runTakeoverKill}}
}

// runTakeoverKill lays the cluster out as v1 before any operator runs, then starts ours and kills
// it mid-takeover; start's convergence wait ends the takeover.
func runTakeoverKill(t *testing.T) {
	var before map[string]types.UID
	s := start(t, scOptions{
		startOperator: func(*sc) {},
		beforeConverge: func(s *sc) {
			tc, err := s.tc(s.env.Ctx)
			if err != nil {
				s.t.Fatal(err)
			}
			s.chk.setTakeover(true)
			v1objects.Create(s.t, s.env, tc, "discovery", "pd", "tikv", "tidb")
			before = s.readyPods()
			s.mgr = s.startManager()
			s.t.Logf("operator cancelled with %d of 3 StatefulSets taken over", s.waitNoV1Annotation(1))
			s.restartManager()
		},
	})
	s.waitNoV1Annotation(3)
	after := s.readyPods()
	for name, uid := range before {
		s.chk.check(invTakeoverNoRestart, after[name] == uid, "pod %s replaced by the takeover (UID %s → %s)", name, uid, after[name])
	}
}

// readyPods waits until the cluster's basicPods pods exist and are Ready, and returns their UIDs.
func (s *sc) readyPods() map[string]types.UID {
	s.t.Helper()
	var uids map[string]types.UID
	framework.WaitFor(s.t, s.env.Ctx, readyTimeout, "basic's pods Ready", func(ctx context.Context) (bool, error) {
		pods, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: label.InstanceLabelKey + "=basic"})
		if err != nil {
			return false, err
		}
		uids = map[string]types.UID{}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && component.PodReady(p) {
				uids[p.Name] = p.UID
			}
		}
		framework.Observef(ctx, "%d of %d pods Ready", len(uids), basicPods)
		return len(uids) == basicPods, nil
	})
	return uids
}

// waitNoV1Annotation waits until at least n of the PD, TiKV and TiDB StatefulSets lost v1's
// last-applied annotation (taken over), and returns how many had.
func (s *sc) waitNoV1Annotation(n int) int {
	s.t.Helper()
	done := 0
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, "StatefulSets taken over", func(ctx context.Context) (bool, error) {
		done = 0
		for _, c := range []string{"pd", "tikv", "tidb"} {
			sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(ctx, "basic-"+c, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if _, ok := sts.Annotations[label.AnnLastAppliedConfig]; !ok {
				done++
			}
		}
		framework.Observef(ctx, "%d of 3 StatefulSets without v1's annotation", done)
		return done >= n, nil
	})
	return done
}
