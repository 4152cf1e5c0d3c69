//go:build integration

package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func fastFailover(o *app.Options) {
	o.Controller.TiKVFailoverPeriod = time.Second
	o.Controller.TiDBFailoverPeriod = time.Second
}

func TestTiKVFailoverAddsAStoreAndRecoversByRequest(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, fastFailover)
	pc := deployBasic(t, env)
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"maxFailoverCount": 1}})

	var downID uint64
	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range tc.Status.TiKV.Stores {
		if s.PodName == "basic-tikv-1" {
			downID, _ = strconv.ParseUint(id, 10, 64)
		}
	}
	if err := sim.SetStoreDown(env.Ctx, env.Namespace, "basic", downID, true); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, pc, "a failover store replaces the Down one", func(tc *v1alpha1.TidbCluster) bool {
		_, recorded := tc.Status.TiKV.FailureStores[strconv.FormatUint(downID, 10)]
		return recorded && tc.Status.TiKV.StatefulSet.Replicas == 4 && upStoresOf(tc) == 3
	})
	if err := sim.SetStoreDown(env.Ctx, env.Namespace, "basic", downID, false); err != nil {
		t.Fatal(err)
	}
	tc, err = pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patchSpec(t, env, pc, map[string]any{"tikv": map[string]any{"failover": map[string]any{"recoverByUID": string(tc.Status.TiKV.FailoverUID)}}})
	waitReady(t, env, pc, "the failover store leaves once every store is Up", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.TiKV.FailureStores) == 0 && tc.Status.TiKV.StatefulSet.Replicas == 3 && len(tc.Status.TiKV.TombstoneStores) == 1
	})
}

func TestTiDBFailoverAddsAServerAndRecovers(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, fastFailover)
	pc := deployBasic(t, env)
	patchSpec(t, env, pc, map[string]any{"tidb": map[string]any{"maxFailoverCount": 1}})

	if _, err := sim.AddFault(env.Ctx, env.Namespace, "basic", api.Fault{Kind: "error", Component: "tidb", PathPrefix: "/status", Status: 500}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "one failover TiDB server", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "failure members %v, replicas %v", tc.Status.TiDB.FailureMembers, tc.Status.TiDB.StatefulSet)
		return len(tc.Status.TiDB.FailureMembers) == 1 && tc.Status.TiDB.StatefulSet != nil && tc.Status.TiDB.StatefulSet.Replicas == 3, nil
	})
	if err := sim.ClearFaults(env.Ctx, env.Namespace, "basic"); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, pc, "TiDB recovers and the failover server goes", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.TiDB.FailureMembers) == 0 && tc.Status.TiDB.StatefulSet.Replicas == 2
	})
}

func upStoresOf(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, s := range tc.Status.TiKV.Stores {
		if s.State == "Up" {
			n++
		}
	}
	return n
}

func TestPDFailoverRebuildsAFailedMember(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, func(o *app.Options) { o.Controller.PDFailoverPeriod = time.Second })
	pc := deployBasic(t, env)
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"maxFailoverCount": 1}})
	before, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(env.Ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldID := before.Status.PD.Members["basic-pd-1"].ID

	if err := sim.SetMemberUnhealthy(env.Ctx, env.Namespace, "basic", "basic-pd-1", true); err != nil {
		t.Fatal(err)
	}
	// The rebuilt member rejoins healthy within a second or two and the
	// failure is then recovered, so the outcome is checked, not the moment.
	framework.WaitFor(t, env.Ctx, readyTimeout, "basic-pd-1 rebuilt as a new member", func(ctx context.Context) (bool, error) {
		events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=PDMemberDeleted"})
		if err != nil {
			return false, err
		}
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		m := tc.Status.PD.Members["basic-pd-1"]
		framework.Observef(ctx, "events %d, basic-pd-1 %+v, failures %+v", len(events.Items), m, tc.Status.PD.FailureMembers)
		return len(events.Items) > 0 && m.ID != "" && m.ID != oldID && m.Health, nil
	})
	waitReady(t, env, pc, "PD recovers with three healthy members", func(tc *v1alpha1.TidbCluster) bool {
		return len(tc.Status.PD.FailureMembers) == 0 && tc.Status.PD.StatefulSet.Replicas == 3 && len(tc.Status.PD.Members) == 3
	})
}
