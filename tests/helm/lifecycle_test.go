//go:build integration

package helm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// exerciseLifecycle drives basic through the operations whose writes the
// Ready path does not make, so the chart's RBAC is proven for them too:
// PD failover deletes a failed member's pod and PVC (pod and PVC delete), a
// TiKV scale-in marks the removed store's PVC defer-deleting (PVC patch),
// the next scale-out deletes that stale PVC, and a rolling upgrade records
// TiKV leader eviction in pod annotations (pod patch). The operator must run
// with a short PD failover period (pdFailoverPeriod).
func exerciseLifecycle(t *testing.T, env *framework.Env) {
	t.Helper()
	pc := versioned.NewForConfigOrDie(env.Config)
	sim := simclient.New("http://"+simAddr, &http.Client{Timeout: 10 * time.Second})
	const pvc = "tikv-basic-tikv-3"

	patchBasic(t, env, pc, `{"spec":{"pd":{"maxFailoverCount":1}}}`)
	oldPD := getPVC(t, env, "pd-basic-pd-1")
	if err := sim.SetMemberUnhealthy(env.Ctx, env.Namespace, "basic", "basic-pd-1", true); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "PD failover deleted basic-pd-1 with its pod and PVC", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "PD failure members %+v", tc.Status.PD.FailureMembers)
		return tc.Status.PD.FailureMembers["basic-pd-1"].MemberDeleted, nil
	})
	// The rebuilt basic-pd-1 joins PD as a new member; clear the fault once it has.
	framework.WaitFor(t, env.Ctx, readyTimeout, "rebuilt basic-pd-1 joined PD", func(ctx context.Context) (bool, error) {
		err := sim.SetMemberUnhealthy(ctx, env.Namespace, "basic", "basic-pd-1", false)
		framework.Observef(ctx, "clear fault: %v", err)
		if simclient.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	waitBasic(t, env, pc, "PD recovered with three members", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.FailureMembers) == 0 && len(tc.Status.PD.Members) == 3
	})
	if getPVC(t, env, "pd-basic-pd-1").UID == oldPD.UID {
		t.Error("PD failover did not replace the failed member's PVC")
	}

	patchBasic(t, env, pc, `{"spec":{"tikv":{"replicas":4}}}`)
	waitBasic(t, env, pc, "TiKV scaled out to 4 Up stores", func(tc *v1alpha1.TidbCluster) bool { return upStores(tc) == 4 })
	first := getPVC(t, env, pvc)

	patchBasic(t, env, pc, `{"spec":{"tikv":{"replicas":3}}}`)
	waitBasic(t, env, pc, "TiKV scaled in to 3 stores", func(tc *v1alpha1.TidbCluster) bool {
		return upStores(tc) == 3 && tc.Status.TiKV.StatefulSet != nil && tc.Status.TiKV.StatefulSet.Replicas == 3
	})
	if _, ok := getPVC(t, env, pvc).Annotations["tidb.pingcap.com/pvc-defer-deleting"]; !ok {
		t.Errorf("PVC %s of the removed store was not marked defer-deleting", pvc)
	}

	patchBasic(t, env, pc, `{"spec":{"tikv":{"replicas":4}}}`)
	waitBasic(t, env, pc, "TiKV scaled out again on a fresh PVC", func(tc *v1alpha1.TidbCluster) bool {
		p, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, pvc, metav1.GetOptions{})
		return upStores(tc) == 4 && err == nil && p.UID != first.UID
	})

	patchBasic(t, env, pc, `{"spec":{"version":"v8.5.1"}}`)
	waitBasic(t, env, pc, "every TiKV pod runs v8.5.1", func(*v1alpha1.TidbCluster) bool {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(env.Ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=tikv"})
		if err != nil || len(pods.Items) != 4 {
			return false
		}
		for _, p := range pods.Items {
			if !strings.HasSuffix(p.Spec.Containers[0].Image, ":v8.5.1") {
				return false
			}
		}
		return true
	})
}

func patchBasic(t *testing.T, env *framework.Env, pc versioned.Interface, patch string) {
	t.Helper()
	if !json.Valid([]byte(patch)) {
		t.Fatalf("invalid patch %s", patch)
	}
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch basic %s: %v", patch, err)
	}
}

// waitBasic waits until basic is Ready at its current generation and done holds.
func waitBasic(t *testing.T, env *framework.Env, pc versioned.Interface, desc string, done func(*v1alpha1.TidbCluster) bool) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		progressing := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		framework.Observef(ctx, "up stores %d, ready=%+v progressing=%+v", upStores(tc), ready, progressing)
		return ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation && done(tc), nil
	})
}

func upStores(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, s := range tc.Status.TiKV.Stores {
		if s.State == "Up" {
			n++
		}
	}
	return n
}

func getPVC(t *testing.T, env *framework.Env, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	p, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		t.Fatalf("PVC %s does not exist", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}
