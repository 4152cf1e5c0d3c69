//go:build integration

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/manager/ticdc"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const ticdcBeginAnnotation = "tidb.pingcap.com/ticdc-graceful-shutdown-begin-time"

func readyCaptures(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, c := range tc.Status.TiCDC.Captures {
		if c.Ready {
			n++
		}
	}
	return n
}

// TestTiCDCDrainsCapturesAndSurvivesAnOperatorRestart runs examples/ticdc:
// Ready with 3 captures; a scale-in drains the removed capture before its
// pod goes, with the operator killed in the middle of the drain and a new
// one finishing the same wait; a rolling upgrade resigns the owner before
// its pod restarts and never takes two captures down at once; a scale-out.
func TestTiCDCDrainsCapturesAndSurvivesAnOperatorRestart(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "ticdc"}
	first := operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "ticdc", "tidb-cluster.yaml"), env.Namespace)
	f.waitReady(t, "examples/ticdc is Ready with 3 ready captures", func(tc *v1alpha1.TidbCluster) bool {
		return readyCaptures(tc) == 3
	})

	// A drain long enough to stop the operator in the middle of it.
	slow := api.Duration(15 * time.Second)
	if _, err := f.sim.SetClusterTimings(env.Ctx, env.Namespace, f.name, api.TimingsUpdate{TiCDCDrainTime: &slow}); err != nil {
		t.Fatal(err)
	}
	violations := f.watchPodOutlives(t, "ticdc-ticdc-2", captureTablesHeld("ticdc-ticdc-2"))
	f.patch(t, "ticdc", `{"replicas":2}`)
	var begin string
	framework.WaitFor(t, env.Ctx, readyTimeout, "the drain of ticdc-ticdc-2 began", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "ticdc-ticdc-2", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		begin = p.Annotations[ticdcBeginAnnotation]
		return begin != "", nil
	})
	// Events are written asynchronously: stopping the operator may drop the
	// one for a drain it already began, so count only after it is stored.
	waitEvent(t, env, corev1.EventTypeNormal, ticdc.ReasonDrainStarted, "ticdc-ticdc-2")
	if err := first.Stop(); err != nil {
		t.Fatalf("stop the first operator: %v", err)
	}
	operator.StartManager(t, env.Namespace, nil)
	f.waitReady(t, "the second operator finished the scale-in", func(tc *v1alpha1.TidbCluster) bool {
		return readyCaptures(tc) == 2 && tc.Status.TiCDC.StatefulSet.Replicas == 2
	})
	if v := violations(); v != "" {
		t.Error(v)
	}
	waitEvent(t, env, corev1.EventTypeNormal, ticdc.ReasonDrainStarted, "ticdc-ticdc-2")
	if n := eventCount(t, env, ticdc.ReasonDrainStarted, "ticdc-ticdc-2"); n != 1 {
		t.Errorf("the drain of ticdc-ticdc-2 was started %d times; the second operator must resume the first wait", n)
	}

	fast := api.Duration(time.Second)
	if _, err := f.sim.SetClusterTimings(env.Ctx, env.Namespace, f.name, api.TimingsUpdate{TiCDCDrainTime: &fast}); err != nil {
		t.Fatal(err)
	}
	owner := f.ownerPod(t)
	most := f.watchMostDown(t, "ticdc", 2)
	f.patch(t, "ticdc", `{"version":"v8.5.1"}`)
	f.waitReady(t, "every capture runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return strings.HasSuffix(tc.Status.TiCDC.Image, ":v8.5.1") && readyCaptures(tc) == 2 && f.podsRun(t, "ticdc", "v8.5.1", 2)
	})
	if down, at := most(); down > 1 {
		t.Errorf("%d captures were down at once during the rollout (%s)", down, at)
	}
	if owner == "" {
		t.Fatal("no capture was the owner before the upgrade")
	}
	waitEvent(t, env, corev1.EventTypeNormal, ticdc.ReasonOwnerResigned, owner)

	f.patch(t, "ticdc", `{"replicas":3}`)
	f.waitReady(t, "scaled out to 3 ready captures", func(tc *v1alpha1.TidbCluster) bool {
		return readyCaptures(tc) == 3 && tc.Status.TiCDC.StatefulSet.Replicas == 3
	})
}

// ownerPod returns the pod of the owner capture, as the simulator has it.
func (f *clusterFixture) ownerPod(t *testing.T) string {
	t.Helper()
	st, err := f.sim.Cluster(f.env.Ctx, f.env.Namespace, f.name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Captures {
		if c.Owner {
			return c.PodName
		}
	}
	return ""
}

// captureTablesHeld says how many tables pod's capture still replicates.
func captureTablesHeld(pod string) func(st *api.ClusterState) string {
	return func(st *api.ClusterState) string {
		for _, c := range st.Captures {
			if c.PodName == pod && c.Tables > 0 {
				return fmt.Sprintf("its capture held %d tables", c.Tables)
			}
		}
		return ""
	}
}

// eventCount adds up the occurrences of events with reason naming text.
func eventCount(t *testing.T, env *framework.Env, reason, text string) int32 {
	t.Helper()
	evs, err := env.Kube.CoreV1().Events(env.Namespace).List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	for _, e := range evs.Items {
		if e.Reason == reason && strings.Contains(e.Message, text) {
			n += max(e.Count, 1)
		}
	}
	return n
}
