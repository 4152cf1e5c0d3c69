//go:build integration

package e2e

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const suspendCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: suspend
spec:
  version: v8.5.0
  pd:
    baseImage: pingcap/pd
    replicas: 1
    requests:
      storage: 10Gi
  tikv:
    baseImage: pingcap/tikv
    replicas: 3
    requests:
      storage: 100Gi
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
`

// TestSuspendStopsEveryPodKeepsTheDataAndResumes sets
// spec.suspendAction.suspendStatefulSet: every StatefulSet goes (TiDB and
// TiKV before PD), no pod runs, every PVC stays, and the cluster reports
// Suspended without Progressing; removing the action brings the same
// members back on the same data (PD's store IDs unchanged).
func TestSuspendStopsEveryPodKeepsTheDataAndResumes(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), name: "suspend"}
	framework.ApplyYAML(t, env.Ctx, suspendCluster, env.Namespace)
	var stores string
	f.waitReady(t, "suspend is Ready with 3 stores", func(tc *v1alpha1.TidbCluster) bool {
		stores = storeIDs(tc)
		return len(tc.Status.TiKV.Stores) == 3
	})
	pvcs := f.pvcNames(t)

	body := []byte(`{"spec":{"suspendAction":{"suspendStatefulSet":true}}}`)
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, f.name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "every component suspended, no pod left", func(ctx context.Context) (bool, error) {
		tc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		sets, err := env.Kube.AppsV1().StatefulSets(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=suspend,app.kubernetes.io/component in (pd,tikv,tidb)"})
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		progressing := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		framework.Observef(ctx, "%d StatefulSets, %d pods, ready=%+v progressing=%+v", len(sets.Items), len(pods.Items), ready, progressing)
		return len(sets.Items) == 0 && len(pods.Items) == 0 && tc.Status.PD.Phase == v1alpha1.SuspendPhase &&
			tc.Status.TiKV.Phase == v1alpha1.SuspendPhase && tc.Status.TiDB.Phase == v1alpha1.SuspendPhase &&
			ready != nil && ready.Reason == "Suspended" && progressing != nil && progressing.Status == metav1.ConditionFalse, nil
	})
	if got := f.pvcNames(t); fmt.Sprint(got) != fmt.Sprint(pvcs) {
		t.Fatalf("PVCs changed while suspended:\n before %v\n after  %v", pvcs, got)
	}
	waitEvent(t, env, "Normal", "SuccessfulDelete", "StatefulSet suspend-pd")

	body = []byte(`{"spec":{"suspendAction":null}}`)
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, f.name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitReady(t, "resumed with the same stores", func(tc *v1alpha1.TidbCluster) bool {
		return storeIDs(tc) == stores && tc.Status.PD.Phase == v1alpha1.NormalPhase
	})
}

// storeIDs lists the TiKV store IDs in status, sorted.
func storeIDs(tc *v1alpha1.TidbCluster) string {
	var ids []string
	for id := range tc.Status.TiKV.Stores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return fmt.Sprint(ids)
}

// pvcNames lists the cluster's PVCs as name=uid, sorted.
func (f *clusterFixture) pvcNames(t *testing.T) []string {
	t.Helper()
	list, err := f.env.Kube.CoreV1().PersistentVolumeClaims(f.env.Namespace).List(f.env.Ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + f.name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name+"="+string(p.UID))
	}
	sort.Strings(out)
	return out
}
