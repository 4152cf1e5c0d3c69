//go:build integration

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestBasicTidbMonitorBecomesReadyAndIsCollected applies examples/basic's
// cluster and TidbMonitor unchanged: the monitor reaches Ready (KWOK runs
// its pod), its StatefulSet, Services, ConfigMaps and RBAC carry the TiDB
// Operator's names, the monitor labels and ports, the configuration scrapes
// basic's components, and deleting the monitor removes them all (owner
// references).
func TestBasicTidbMonitorBecomesReadyAndIsCollected(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx, ns := env.Ctx, env.Namespace
	examples := filepath.Join(framework.RepoRoot(), "examples", "basic")
	framework.ApplyYAMLFile(t, ctx, filepath.Join(examples, "tidb-cluster.yaml"), ns)
	framework.ApplyYAMLFile(t, ctx, filepath.Join(examples, "tidb-monitor.yaml"), ns)

	framework.WaitFor(t, ctx, readyTimeout, "TidbMonitor basic is Ready", func(ctx context.Context) (bool, error) {
		tm, err := pc.PingcapV1alpha1().TidbMonitors(ns).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tm.Status.Conditions, "Ready")
		framework.Observef(ctx, "ready=%+v observedGeneration=%d", c, tm.Status.ObservedGeneration)
		return c != nil && c.Status == metav1.ConditionTrue && tm.Status.ObservedGeneration == tm.Generation, nil
	})
	tm, err := pc.PingcapV1alpha1().TidbMonitors(ns).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(tm.Status.Conditions, "Unsupported"); c != nil {
		t.Errorf("the basic example uses nothing unsupported: %+v", c)
	}

	sts, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "basic-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"app.kubernetes.io/instance": "basic", "app.kubernetes.io/component": "monitor",
		"app.kubernetes.io/managed-by": "tidb-operator"}
	for k, v := range wantLabels {
		if sts.Labels[k] != v || sts.Spec.Template.Labels[k] != v {
			t.Errorf("StatefulSet/template label %s = %q/%q, want %q", k, sts.Labels[k], sts.Spec.Template.Labels[k], v)
		}
	}
	ports := map[string]int32{}
	for _, c := range sts.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			ports[c.Name] = p.ContainerPort
		}
	}
	for name, p := range map[string]int32{"prometheus": 9090, "grafana": 3000, "reloader": 9089, "prometheus-config-reloader": 9088} {
		if ports[name] != p {
			t.Errorf("container %s port %d, want %d (%v)", name, ports[name], p, ports)
		}
	}
	if init := sts.Spec.Template.Spec.InitContainers; len(init) != 1 || init[0].Image != "pingcap/tidb-monitor-initializer:v8.5.0" {
		t.Errorf("init containers %+v", init)
	}
	if sa := sts.Spec.Template.Spec.ServiceAccountName; sa != "basic-monitor" {
		t.Errorf("service account %q", sa)
	}
	for name, port := range map[string]int32{"basic-prometheus": 9090, "basic-grafana": 3000, "basic-monitor-reloader": 9089} {
		svc, err := env.Kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Service %s: %v", name, err)
			continue
		}
		if len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].Port != port || svc.Spec.Selector["app.kubernetes.io/component"] != "monitor" {
			t.Errorf("Service %s: ports %+v selector %v", name, svc.Spec.Ports, svc.Spec.Selector)
		}
	}
	cm, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "basic-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, comp := range []string{"pd", "tikv", "tidb"} {
		if !strings.Contains(cm.Data["prometheus.yml"], "job_name: "+ns+"/basic/"+comp) {
			t.Errorf("prometheus.yml has no %s job:\n%s", comp, cm.Data["prometheus.yml"])
		}
	}
	if _, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "basic-monitor-grafana", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := env.Kube.RbacV1().RoleBindings(ns).Get(ctx, "basic-monitor", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}

	framework.Kubectl(t, "-n", ns, "delete", "tidbmonitor", "basic")
	framework.WaitFor(t, ctx, 2*time.Minute, "the monitor's objects are collected", func(ctx context.Context) (bool, error) {
		var left []string
		check := func(kind string, err error) {
			if !apierrors.IsNotFound(err) {
				left = append(left, kind)
			}
		}
		_, err := env.Kube.AppsV1().StatefulSets(ns).Get(ctx, "basic-monitor", metav1.GetOptions{})
		check("StatefulSet", err)
		for _, s := range []string{"basic-prometheus", "basic-grafana", "basic-monitor-reloader"} {
			_, err = env.Kube.CoreV1().Services(ns).Get(ctx, s, metav1.GetOptions{})
			check("Service "+s, err)
		}
		for _, c := range []string{"basic-monitor", "basic-monitor-grafana"} {
			_, err = env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, c, metav1.GetOptions{})
			check("ConfigMap "+c, err)
		}
		_, err = env.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "basic-monitor", metav1.GetOptions{})
		check("ServiceAccount", err)
		framework.Observef(ctx, "left: %v", left)
		return len(left) == 0, nil
	})
}
