//go:build integration

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
	"github.com/kubetidb/tidb-operator/pkg/names"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// watchInvariants samples the simulator and the pods while a change runs
// and records every violation: a TiKV pod removed by a scale-in (gone, and
// its ordinal beyond the StatefulSet's replicas) while its store is not
// Tombstone. A pod briefly gone during a rolling restart is not a removal.
type watchInvariants struct {
	mu         sync.Mutex
	violations []string
	evicted    bool
	leaders    map[string]bool
	maxOffline int // the most stores seen Offline at once
}

func (w *watchInvariants) run(ctx context.Context, env *framework.Env, sim *simclient.Client) {
	w.leaders = map[string]bool{}
	poll(ctx, func(ctx context.Context) bool {
		st, err := sim.Cluster(ctx, env.Namespace, "basic")
		if err != nil {
			return ctx.Err() == nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, "basic-tikv", metav1.GetOptions{})
		if err != nil {
			return ctx.Err() == nil
		}
		offline := 0
		for _, s := range st.Stores {
			if s.StateName == "Offline" {
				offline++
			}
		}
		w.maxOffline = max(w.maxOffline, offline)
		for _, s := range st.Stores {
			w.evicted = w.evicted || s.Evicting
			ord, err := names.Ordinal(s.PodName)
			if s.StateName == "Tombstone" || err != nil || ord < *sts.Spec.Replicas {
				continue
			}
			if _, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, s.PodName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				continue
			}
			// The store may have become Tombstone (for good) and the pod removed since the first read.
			if state, ok := storeStateNow(ctx, env, sim, s.ID); ok && state != "Tombstone" {
				w.violations = append(w.violations, fmt.Sprintf("pod %s was removed while its store %d is %s", s.PodName, s.ID, state))
			}
		}
		if st.Leader != "" {
			w.leaders[st.Leader] = true
		}
		return true
	})
}

// storeStateNow reads a store's state from the simulator again; ok is
// false when the simulator could not be asked (the next sample decides).
func storeStateNow(ctx context.Context, env *framework.Env, sim *simclient.Client, id uint64) (state string, ok bool) {
	st, err := sim.Cluster(ctx, env.Namespace, "basic")
	if err != nil {
		return "", false
	}
	for _, s := range st.Stores {
		if s.ID == id {
			return s.StateName, true
		}
	}
	return "gone from PD", true
}

// waitPVPolicies waits until the PVs bound to the named PVCs have policy.
func waitPVPolicies(t *testing.T, env *framework.Env, pvcs []string, policy corev1.PersistentVolumeReclaimPolicy) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, time.Minute, "PVs of the members' PVCs are "+string(policy), func(ctx context.Context) (bool, error) {
		for _, name := range pvcs {
			pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if pvc.Spec.VolumeName == "" {
				framework.Observef(ctx, "PVC %s not bound", name)
				return false, nil
			}
			pv, err := env.Kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if pv.Spec.PersistentVolumeReclaimPolicy != policy {
				framework.Observef(ctx, "PV %s of %s is %s", pv.Name, name, pv.Spec.PersistentVolumeReclaimPolicy)
				return false, nil
			}
		}
		return true, nil
	})
}

func (w *watchInvariants) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.violations {
		t.Error(v)
	}
}

func TestScaleTiKVAndPDOutAndIn(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	watchCtx, stop := context.WithCancel(env.Ctx)
	w := &watchInvariants{}
	done := make(chan struct{})
	go func() { defer close(done); w.run(watchCtx, env, sim) }()

	upStores := func(n int) func(*v1alpha1.TidbCluster) bool {
		return func(tc *v1alpha1.TidbCluster) bool {
			up := 0
			for _, s := range tc.Status.TiKV.Stores {
				if s.State == "Up" {
					up++
				}
			}
			return up == n && len(tc.Status.TiKV.Stores) == n
		}
	}
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"replicas": 5}})
	waitReady(t, env, pc, "TiKV scaled out to 5 Up stores", upStores(5))
	// scaleInParallelism 2: both stores leave at once (PD keeps 3 replicas,
	// so 3 Up stores may remain), never a pod before its store is Tombstone.
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"replicas": 3,
		"scalePolicy": map[string]any{"scaleInParallelism": 2}}})
	waitReady(t, env, pc, "TiKV scaled in to 3 stores", func(tc *v1alpha1.TidbCluster) bool {
		return upStores(3)(tc) && len(tc.Status.TiKV.TombstoneStores) == 2 && tc.Status.TiKV.StatefulSet.Replicas == 3
	})
	w.mu.Lock()
	if w.maxOffline != 2 {
		t.Errorf("with scaleInParallelism 2, at most %d stores were Offline at once, want both leaving stores", w.maxOffline)
	}
	w.mu.Unlock()
	for _, pvc := range []string{"tikv-basic-tikv-3", "tikv-basic-tikv-4"} {
		got, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, pvc, metav1.GetOptions{})
		if err != nil {
			t.Errorf("PVC %s of a scaled-in store must be kept: %v", pvc, err)
			continue
		}
		if _, ok := got.Annotations["tidb.pingcap.com/pvc-defer-deleting"]; !ok {
			t.Errorf("PVC %s lacks the defer-deleting annotation: %v", pvc, got.Annotations)
		}
		waitEvent(t, env, corev1.EventTypeNormal, component.ReasonPVCDeferDeleting, pvc)
	}
	// Each lifecycle step of the scale-in is told: the store deleted, then Tombstone.
	for _, pod := range []string{"basic-tikv-3", "basic-tikv-4"} {
		waitEvent(t, env, corev1.EventTypeNormal, store.ReasonStoreDeleted, pod)
		waitEvent(t, env, corev1.EventTypeNormal, store.ReasonStoreTombstone, pod)
	}

	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"replicas": 5}})
	waitReady(t, env, pc, "PD scaled out to 5 members", func(tc *v1alpha1.TidbCluster) bool { return len(tc.Status.PD.Members) == 5 })
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"replicas": 3}})
	waitReady(t, env, pc, "PD scaled in to 3 members", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.Members) == 3 && tc.Status.PD.StatefulSet.Replicas == 3
	})
	st, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 3 {
		t.Errorf("PD still has %d members after scale-in: %+v", len(st.Members), st.Members)
	}
	waitEvent(t, env, corev1.EventTypeNormal, "PDMemberDeleted", "basic-pd-4")

	waitPVPolicies(t, env, []string{"pd-basic-pd-0", "pd-basic-pd-1", "pd-basic-pd-2",
		"tikv-basic-tikv-0", "tikv-basic-tikv-1", "tikv-basic-tikv-2"}, corev1.PersistentVolumeReclaimRetain)
	patchSpec(t, env, pc, map[string]any{"enablePVReclaim": true})
	removed := []string{"pd-basic-pd-3", "pd-basic-pd-4", "tikv-basic-tikv-3", "tikv-basic-tikv-4"}
	framework.WaitFor(t, env.Ctx, time.Minute, "enablePVReclaim deletes the scaled-in members' PVCs", func(ctx context.Context) (bool, error) {
		for _, name := range removed {
			_, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				framework.Observef(ctx, "PVC %s: %v", name, err)
				return false, nil
			}
		}
		return true, nil
	})
	waitPVPolicies(t, env, []string{"pd-basic-pd-0", "tikv-basic-tikv-2"}, corev1.PersistentVolumeReclaimRetain)

	// PD down to one member and out again: the one member is a quorum of
	// the membership PD has, so the scale-out must not wait on it.
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"replicas": 1}})
	waitReady(t, env, pc, "PD scaled in to 1 member", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.Members) == 1 && tc.Status.PD.StatefulSet.Replicas == 1
	})
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"replicas": 3}})
	waitReady(t, env, pc, "PD scaled out from 1 to 3 members", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.Members) == 3 && tc.Status.PD.StatefulSet.ReadyReplicas == 3
	})
	stop()
	<-done
	w.check(t)
}
