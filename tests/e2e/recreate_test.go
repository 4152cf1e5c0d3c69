//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// recreateCluster is a cluster named basic with %d PD members and one TiKV
// and one TiDB.
const recreateCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata: {name: basic}
spec:
  version: v8.5.0
  helper: {image: alpine:3.20}
  pd:
    baseImage: pingcap/pd
    replicas: %d
    maxFailoverCount: 0
    requests: {storage: 1Gi}
    config: {replication: {max-replicas: 1}}
  tikv:
    baseImage: pingcap/tikv
    replicas: 1
    maxFailoverCount: 0
    requests: {storage: 1Gi}
    config: {}
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
    maxFailoverCount: 0
    service: {type: ClusterIP}
    config: {}
`

// TestRecreateOverRetainedPDData: a TidbCluster deleted and created again
// under the same name with fewer PD members reuses the PD PVCs the
// operator kept, whose data records the earlier three members, so PD never
// elects a leader. The Ready condition says so — PD has no leader, the
// retained PVCs and the three members they are for — with one Warning
// event and a status that does not churn; scaling spec.pd.replicas back to
// 3 makes the cluster Ready.
//
// The recovery is the one a real PD allows too: the pods come back on the
// same PVCs, so the members PD's data records run again and regain their
// quorum. (Deleting the extra PVCs would not help a real PD: pd-basic-pd-0
// still records three members; the simulator, like PD, also refuses a
// deleted member's identity.)
func TestRecreateOverRetainedPDData(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.ApplyYAML(t, env.Ctx, fmt.Sprintf(recreateCluster, 3), env.Namespace)
	waitReady(t, env, pc, "basic is Ready with 3 PD members", nil)
	uids := pdClaimUIDs(t, env)
	if len(uids) != 3 {
		t.Fatalf("PD PVCs before the deletion: %v, want 3", uids)
	}

	deleteAndWaitGone(t, env, pc)
	if got := pdClaimUIDs(t, env); fmt.Sprint(got) != fmt.Sprint(uids) {
		t.Fatalf("PD PVCs after the deletion: %v, want the same 3 kept: %v", got, uids)
	}

	framework.ApplyYAML(t, env.Ctx, fmt.Sprintf(recreateCluster, 1), env.Namespace)
	var ready *metav1.Condition
	framework.WaitFor(t, env.Ctx, 3*time.Minute, "Ready names PD's missing leader and the retained PVCs", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready = meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		framework.Observef(ctx, "ready=%+v", ready)
		return ready != nil && ready.Status == metav1.ConditionFalse && strings.Contains(ready.Message, "no leader") &&
			strings.Contains(ready.Message, "pd-basic-pd-0…2 predate this TidbCluster") &&
			strings.Contains(ready.Message, "PVCs exist for 3 PD members") &&
			strings.Contains(ready.Message, "scale spec.pd.replicas back to 3"), nil
	})
	t.Logf("Ready of the re-created cluster: %s", ready.Message)
	if got := pdClaimUIDs(t, env); fmt.Sprint(got) != fmt.Sprint(uids) {
		t.Errorf("PD PVCs of the new cluster: %v, want the retained %v", got, uids)
	}
	checkStuckStatusStable(t, env, pc)
	checkOneNoLeaderEvent(t, env, ready.Message)

	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"replicas": 3}})
	waitReady(t, env, pc, "basic is Ready once its 3 PD members run again", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.PD.Synced && pdHealthy(tc) == 3
	})
}

// pdClaimUIDs maps the names of basic's PD data PVCs to their UIDs.
func pdClaimUIDs(t *testing.T, env *framework.Env) map[string]types.UID {
	t.Helper()
	list, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, pvc := range list.Items {
		if strings.HasPrefix(pvc.Name, "pd-basic-pd-") {
			out[pvc.Name] = pvc.UID
		}
	}
	return out
}

// deleteAndWaitGone deletes basic and waits until it, its StatefulSets and
// its pods are gone (garbage-collected).
func deleteAndWaitGone(t *testing.T, env *framework.Env, pc versioned.Interface) {
	t.Helper()
	if err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Delete(env.Ctx, "basic", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, 2*time.Minute, "basic, its StatefulSets and pods are gone", func(ctx context.Context) (bool, error) {
		tcs, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		sets, err := env.Kube.AppsV1().StatefulSets(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=basic"})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "%d TidbClusters, %d StatefulSets, %d pods left", len(tcs.Items), len(sets.Items), len(pods.Items))
		return len(tcs.Items) == 0 && len(sets.Items) == 0 && len(pods.Items) == 0, nil
	})
}

// checkStuckStatusStable: while PD stays without a leader, the syncs that
// keep asking it write no new status (the message names no changing time).
func checkStuckStatusStable(t *testing.T, env *framework.Env, pc versioned.Interface) {
	t.Helper()
	get := func() *v1alpha1.TidbCluster {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tc
	}
	// The first syncs of the new cluster may still write progress (the
	// StatefulSet's pods turning Ready); the status settles within seconds.
	// Settled means a watch from the current version sees no change for a
	// quiet window spanning several syncs and PD reads.
	framework.WaitFor(t, env.Ctx, time.Minute, "the stuck cluster's status settles", func(ctx context.Context) (bool, error) {
		rv := get().ResourceVersion
		quiet, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		w, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Watch(quiet, metav1.ListOptions{
			FieldSelector: "metadata.name=basic", ResourceVersion: rv})
		if err != nil {
			return false, nil
		}
		defer w.Stop()
		select {
		case ev, ok := <-w.ResultChan():
			framework.Observef(ctx, "resourceVersion %s changed: %v (open %v)", rv, ev.Type, ok)
			return false, nil
		case <-quiet.Done():
			return ctx.Err() == nil, nil
		}
	})
}

// checkOneNoLeaderEvent: the cause in message is recorded as one Warning
// PDNoLeader event, not one per sync.
func checkOneNoLeaderEvent(t *testing.T, env *framework.Env, message string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, 30*time.Second, "one PDNoLeader event naming the cause", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var found []corev1.Event
		for _, ev := range events.Items {
			if ev.Reason == pd.ReasonPDNoLeader && ev.InvolvedObject.Name == "basic" {
				found = append(found, ev)
			}
		}
		framework.Observef(ctx, "%d PDNoLeader events", len(found))
		if len(found) != 1 {
			return false, nil
		}
		ev := found[0]
		if ev.Type != corev1.EventTypeWarning || ev.Count > 1 || !strings.Contains(message, ev.Message) {
			t.Fatalf("PDNoLeader event %s x%d %q; want one Warning whose message the condition names:\n%s",
				ev.Type, ev.Count, ev.Message, message)
		}
		return true, nil
	})
}

// pdHealthy counts basic's healthy PD members.
func pdHealthy(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.PD.Members {
		if m.Health {
			n++
		}
	}
	return n
}
