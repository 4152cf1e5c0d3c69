//go:build integration

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/pump"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func onlinePumps(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.Pump.Members {
		if m != nil && m.State == "online" {
			n++
		}
	}
	return n
}

// TestPumpGoesOfflineBeforeItsPodAndAcrossAnOperatorRestart runs
// examples/binlog: TiDB starts once a pump is online; a scale-in takes the
// pump offline before its pod goes, with the operator killed while the pump
// is closing and a new one finishing; a version upgrade; a scale-out whose
// new pump (the reused ordinal) registers online again.
func TestPumpGoesOfflineBeforeItsPodAndAcrossAnOperatorRestart(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "binlog"}
	first := operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "binlog", "tidb-cluster.yaml"), env.Namespace)
	f.waitReady(t, "examples/binlog is Ready with 2 online pumps", func(tc *v1alpha1.TidbCluster) bool {
		return onlinePumps(tc) == 2 && len(tc.Status.TiDB.Members) == 1
	})

	slow := api.Duration(10 * time.Second)
	if _, err := f.sim.SetClusterTimings(env.Ctx, env.Namespace, f.name, api.TimingsUpdate{PumpOfflineTime: &slow}); err != nil {
		t.Fatal(err)
	}
	violations := f.watchPodOutlives(t, "binlog-pump-1", pumpNotOffline("binlog-pump-1"))
	f.patch(t, "pump", `{"replicas":1}`)
	framework.WaitFor(t, env.Ctx, readyTimeout, "the offline request for binlog-pump-1", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "binlog-pump-1", metav1.GetOptions{})
		return err == nil && p.Annotations[label.AnnPumpOfflineRequestedAt] != "", err
	})
	// Events are written asynchronously: stopping the operator may drop the
	// one for a request it already made, so count only after it is stored.
	waitEvent(t, env, corev1.EventTypeNormal, pump.ReasonOfflineRequested, "binlog-pump-1")
	if err := first.Stop(); err != nil {
		t.Fatalf("stop the first operator: %v", err)
	}
	operator.StartManager(t, env.Namespace, nil)
	f.waitReady(t, "the second operator finished the scale-in", func(tc *v1alpha1.TidbCluster) bool {
		return tc.Status.Pump.StatefulSet != nil && tc.Status.Pump.StatefulSet.Replicas == 1 && onlinePumps(tc) == 1
	})
	if v := violations(); v != "" {
		t.Error(v)
	}
	waitEvent(t, env, corev1.EventTypeNormal, pump.ReasonOffline, "binlog-pump-1")
	if n := eventCount(t, env, pump.ReasonOfflineRequested, "binlog-pump-1"); n != 1 {
		t.Errorf("pump offline requested %d times; the second operator must wait for the first request", n)
	}

	f.patch(t, "pump", `{"version":"v8.5.1"}`)
	f.waitReady(t, "the pump runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return strings.HasSuffix(tc.Status.Pump.Image, ":v8.5.1") && onlinePumps(tc) == 1 && f.podsRun(t, "pump", "v8.5.1", 1)
	})

	f.patch(t, "pump", `{"replicas":2}`)
	f.waitReady(t, "scaled out to 2 online pumps again", func(tc *v1alpha1.TidbCluster) bool {
		return onlinePumps(tc) == 2 && tc.Status.Pump.StatefulSet.Replicas == 2
	})
}

// pumpNotOffline says the registry state of pod's pump while it is not offline.
func pumpNotOffline(pod string) func(st *api.ClusterState) string {
	return func(st *api.ClusterState) string {
		for _, n := range st.PumpNodes {
			if n.PodName == pod && n.State != "" && n.State != "offline" {
				return "its pump was " + n.State
			}
		}
		return ""
	}
}
