//go:build integration

package e2e

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/store"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// replaceWatch follows one TiKV member's volume replacement while it
// happens: the most replicas the StatefulSet had (the spare), and whether
// the member's old PVC was seen deleted while its old store was not yet
// Tombstone (data dropped before PD moved it away).
type replaceWatch struct {
	mu          sync.Mutex
	maxReplicas int32
	early       string
}

func (w *replaceWatch) run(ctx context.Context, env *framework.Env, sim *simclient.Client, pvc string, pvcUID types.UID, storeID uint64) {
	poll(ctx, func(ctx context.Context) bool {
		st, err := sim.Cluster(ctx, env.Namespace, "basic")
		if err != nil {
			return ctx.Err() == nil
		}
		state := ""
		for _, s := range st.Stores {
			if s.ID == storeID {
				state = s.StateName
			}
		}
		sts, stsErr := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, "basic-tikv", metav1.GetOptions{})
		p, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, pvc, metav1.GetOptions{})
		gone := apierrors.IsNotFound(err) || (err == nil && (p.UID != pvcUID || p.DeletionTimestamp != nil))
		w.mu.Lock()
		defer w.mu.Unlock()
		if stsErr == nil && sts.Spec.Replicas != nil && *sts.Spec.Replicas > w.maxReplicas {
			w.maxReplicas = *sts.Spec.Replicas
		}
		if gone && state != "Tombstone" && w.early == "" {
			w.early = "PVC " + pvc + " deleted while store " + strconv.FormatUint(storeID, 10) + " was " + state
		}
		return !gone
	})
}

// TestReplaceVolumeOfATiKVStore annotates a TiKV pod with
// tidb.pingcap.com/replace-volume: a spare TiKV is added, the store is
// deleted and reaches Tombstone before its PVC goes, the pod comes back on
// a new PVC as a new Up store, the spare leaves, and the annotation is gone.
func TestReplaceVolumeOfATiKVStore(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	const pod, pvcName = "basic-tikv-1", "tikv-basic-tikv-1"
	oldPod := podUID(t, env, pod)
	oldPVC, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, pvcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	oldStore, ok := storeOf(st, pod)
	if !ok {
		t.Fatalf("no store of %s in the simulator", pod)
	}

	w := &replaceWatch{}
	watchCtx, stop := context.WithTimeout(env.Ctx, readyTimeout)
	defer stop()
	done := make(chan struct{})
	go func() { defer close(done); w.run(watchCtx, env, sim, pvcName, oldPVC.UID, oldStore.ID) }()
	annotatePod(t, env, pod, map[string]*string{label.AnnReplaceVolume: ptr.To(label.ReplaceVolumeTrue)})
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonReplaceVolumeStarted, pod)
	<-done
	w.mu.Lock()
	if w.early != "" {
		t.Errorf("data dropped before Tombstone: %s", w.early)
	}
	if w.maxReplicas != 4 {
		t.Errorf("TiKV StatefulSet reached %d replicas, want 4 (3 + 1 spare) during the replacement", w.maxReplicas)
	}
	w.mu.Unlock()
	waitEvent(t, env, corev1.EventTypeNormal, store.ReasonStoreDeleted, pod)
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonReplaceVolumePodDeleted, pod)

	waitReady(t, env, pc, pod+" back on a new PVC as a new store, the spare gone", func(tc *v1alpha1.TidbCluster) bool {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, pod, metav1.GetOptions{})
		if err != nil || p.UID == oldPod || p.Annotations[label.AnnReplaceVolume] != "" {
			return false
		}
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, pvcName, metav1.GetOptions{})
		if err != nil || pvc.UID == oldPVC.UID {
			return false
		}
		s, ok := tc.Status.TiKV.Stores[storeIDOf(tc, pod)]
		framework.Observef(env.Ctx, "store of %s: %+v, sts %+v, inProgress %v", pod, s, tc.Status.TiKV.StatefulSet, tc.Status.TiKV.VolReplaceInProgress)
		return ok && s.ID != strconv.FormatUint(oldStore.ID, 10) && s.State == "Up" &&
			tc.Status.TiKV.StatefulSet != nil && tc.Status.TiKV.StatefulSet.Replicas == 3 && !tc.Status.TiKV.VolReplaceInProgress
	})
	st, err = sim.Cluster(env.Ctx, env.Namespace, "basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Stores {
		if s.ID == oldStore.ID && s.StateName != "Tombstone" {
			t.Errorf("old store %d of %s is %s, want Tombstone", s.ID, pod, s.StateName)
		}
	}
}

// storeIDOf returns the ID of the live store of pod in tc's status.
func storeIDOf(tc *v1alpha1.TidbCluster, pod string) string {
	for id, s := range tc.Status.TiKV.Stores {
		if s.PodName == pod {
			return id
		}
	}
	return ""
}

// TestReplaceVolumeOfThePDLeader annotates the PD leader's pod: a spare PD
// joins, leadership moves off the pod, its member is deleted, and the pod
// comes back on a new PVC as a new member; the spare leaves and PD ends
// with three healthy members.
func TestReplaceVolumeOfThePDLeader(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)

	before, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := before.Status.PD.Leader.Name
	if pod == "" {
		t.Fatal("no PD leader in status")
	}
	oldID := before.Status.PD.Members[pod].ID
	pvcName := "pd-" + pod
	oldPVC, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, pvcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	annotatePod(t, env, pod, map[string]*string{label.AnnReplaceVolume: ptr.To(label.ReplaceVolumeTrue)})
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonReplaceVolumeStarted, pod)
	framework.WaitFor(t, env.Ctx, readyTimeout, "a spare PD member joined", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, spare := tc.Status.PD.Members["basic-pd-3"]
		return spare, nil
	})
	waitEvent(t, env, corev1.EventTypeNormal, pd.ReasonLeaderTransferred, pod)
	waitEvent(t, env, corev1.EventTypeNormal, "PDMemberDeleted", pod)
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonReplaceVolumePodDeleted, pod)
	waitReady(t, env, pc, pod+" back as a new member on a new PVC, the spare gone", func(tc *v1alpha1.TidbCluster) bool {
		pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, pvcName, metav1.GetOptions{})
		if err != nil || pvc.UID == oldPVC.UID {
			return false
		}
		m := tc.Status.PD.Members[pod]
		framework.Observef(env.Ctx, "member %+v, members %d, leader %s", m, len(tc.Status.PD.Members), tc.Status.PD.Leader.Name)
		return m.ID != "" && m.ID != oldID && m.Health && len(tc.Status.PD.Members) == 3 &&
			tc.Status.PD.StatefulSet != nil && tc.Status.PD.StatefulSet.Replicas == 3 && !tc.Status.PD.VolReplaceInProgress
	})
}
