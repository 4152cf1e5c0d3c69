//go:build integration

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

func healthyTiProxy(tc *v1alpha1.TidbCluster) int {
	n := 0
	for _, m := range tc.Status.TiProxy.Members {
		if m.Health {
			n++
		}
	}
	return n
}

// TestTiProxyScaleAndRollOneAtATime runs examples/tiproxy: Ready with two
// healthy proxies; 2→3→2; a version upgrade that never has two proxies down
// at once and ends with every pod on the new version; a second upgrade with
// min-ready-seconds across an operator restart.
func TestTiProxyScaleAndRollOneAtATime(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), sim: startSimulator(t, env), name: "tiproxy"}
	first := operator.StartManager(t, env.Namespace, nil)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(framework.RepoRoot(), "examples", "tiproxy", "tidb-cluster.yaml"), env.Namespace)
	f.waitReady(t, "examples/tiproxy is Ready with 2 healthy proxies", func(tc *v1alpha1.TidbCluster) bool {
		return healthyTiProxy(tc) == 2
	})
	if _, err := env.Kube.CoreV1().Services(env.Namespace).Get(env.Ctx, "tiproxy-tiproxy", metav1.GetOptions{}); err != nil {
		t.Fatalf("client Service tiproxy-tiproxy: %v", err)
	}

	f.patch(t, "tiproxy", `{"replicas":3}`)
	f.waitReady(t, "3 healthy proxies", func(tc *v1alpha1.TidbCluster) bool { return healthyTiProxy(tc) == 3 })
	f.patch(t, "tiproxy", `{"replicas":2}`)
	f.waitReady(t, "back to 2 proxies", func(tc *v1alpha1.TidbCluster) bool {
		return healthyTiProxy(tc) == 2 && len(tc.Status.TiProxy.Members) == 2 && tc.Status.TiProxy.StatefulSet.Replicas == 2
	})

	most := f.watchMostDown(t, "tiproxy", 2)
	f.patch(t, "tiproxy", `{"version":"v1.3.1"}`)
	f.waitReady(t, "every proxy runs v1.3.1", func(tc *v1alpha1.TidbCluster) bool {
		return strings.HasSuffix(tc.Status.TiProxy.Image, ":v1.3.1") && healthyTiProxy(tc) == 2 && f.podsRun(t, "tiproxy", "v1.3.1", 2)
	})
	if down, at := most(); down > 1 {
		t.Errorf("%d proxies were down at once during the rollout (%s)", down, at)
	}
	f.rollAcrossAnOperatorRestart(t, first)
}

// rollAcrossAnOperatorRestart upgrades with min-ready-seconds 8 and kills
// the operator while the rollout waits on the first restarted proxy; the
// next operator must still hold the second restart until the first proxy
// has been Ready for 8 s.
func (f *clusterFixture) rollAcrossAnOperatorRestart(t *testing.T, first *operator.Manager) {
	t.Helper()
	env := f.env
	body := []byte(`{"metadata":{"annotations":{"` + label.AnnTiProxyMinReadySeconds + `":"8"}},"spec":{"tiproxy":{"version":"v1.3.2"}}}`)
	if _, err := f.pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, f.name, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, env.Ctx, readyTimeout, "tiproxy-tiproxy-1 restarted on v1.3.2 and Ready", func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, "tiproxy-tiproxy-1", metav1.GetOptions{})
		return err == nil && p.DeletionTimestamp == nil && podRunsTag(*p, "tiproxy", "v1.3.2") && podIsReady(p.Status.Conditions), nil
	})
	if err := first.Stop(); err != nil {
		t.Fatalf("stop the operator: %v", err)
	}
	operator.StartManager(t, env.Namespace, nil)
	f.waitReady(t, "the next operator finished the rollout", func(tc *v1alpha1.TidbCluster) bool {
		return healthyTiProxy(tc) == 2 && f.podsRun(t, "tiproxy", "v1.3.2", 2)
	})
	p1, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "tiproxy-tiproxy-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p0, err := env.Kube.CoreV1().Pods(env.Namespace).Get(env.Ctx, "tiproxy-tiproxy-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ready1 metav1.Time
	for _, c := range p1.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready1 = c.LastTransitionTime
		}
	}
	// Times are in whole seconds: allow one.
	if gap := p0.CreationTimestamp.Sub(ready1.Time); gap < 7*time.Second {
		t.Errorf("tiproxy-tiproxy-0 restarted %s after tiproxy-tiproxy-1 became Ready, want at least 8s", gap)
	}
}

// watchMostDown samples the component's pods until the returned func is
// called and reports the most of its want pods that were missing, not
// Ready or being deleted at once.
func (f *clusterFixture) watchMostDown(t *testing.T, component string, want int) func() (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(f.env.Ctx)
	var mu sync.Mutex
	most, when := 0, ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		poll(ctx, func(ctx context.Context) bool {
			pods, err := f.env.Kube.CoreV1().Pods(f.env.Namespace).List(ctx, metav1.ListOptions{
				LabelSelector: "app.kubernetes.io/instance=" + f.name + ",app.kubernetes.io/component=" + component})
			if err != nil {
				return true
			}
			var down []string
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp != nil || !podIsReady(p.Status.Conditions) {
					down = append(down, p.Name)
				}
			}
			for i := len(pods.Items); i < want; i++ {
				down = append(down, "(missing)")
			}
			mu.Lock()
			if len(down) > most {
				most, when = len(down), fmt.Sprint(down)
			}
			mu.Unlock()
			return true
		})
	}()
	return func() (int, string) {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return most, when
	}
}

func podIsReady(conds []corev1.PodCondition) bool {
	for _, c := range conds {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
