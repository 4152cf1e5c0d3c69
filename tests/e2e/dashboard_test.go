//go:build integration

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// earlyDashboard serves the cluster basic before basic exists.
const earlyDashboard = `apiVersion: pingcap.com/v1alpha1
kind: TidbDashboard
metadata:
  name: early
spec:
  baseImage: pingcap/tidb-dashboard
  version: latest
  clusters:
    - name: basic
`

// TestDashboardAndNGMonitoring runs examples/basic's TidbDashboard and
// examples/tngm's TidbNGMonitoring: a dashboard created before its
// cluster says so (Ready False ClusterNotFound, a Warning event) and
// converges once the cluster exists; both examples reach Ready with the
// right names, labels, ports, args and config; a version change rolls each
// StatefulSet; the dashboard's PV gets the default Retain policy; deleting
// each removes its objects.
func TestDashboardAndNGMonitoring(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	examples := filepath.Join(framework.RepoRoot(), "examples")

	framework.ApplyYAML(t, env.Ctx, earlyDashboard, env.Namespace)
	waitDashboardCondition(t, env, pc, "early", "ClusterNotFound", metav1.ConditionFalse)
	waitWarning(t, env, "early", "ClusterNotFound")

	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(examples, "basic", "tidb-cluster.yaml"), env.Namespace)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(examples, "basic", "tidb-dashboard.yaml"), env.Namespace)
	framework.ApplyYAMLFile(t, env.Ctx, filepath.Join(examples, "tngm", "tidb-ng-monitoring.yaml"), env.Namespace)
	waitDashboardCondition(t, env, pc, "early", "StatefulSetReady", metav1.ConditionTrue)
	waitDashboardCondition(t, env, pc, "basic", "StatefulSetReady", metav1.ConditionTrue)
	waitNGMReady(t, env, pc)

	checkDashboardObjects(t, env)
	checkNGMObjects(t, env)
	waitPVRetained(t, env, "data-basic-tidb-dashboard-0", "tidb-dashboard")

	patch := []byte(`{"spec":{"version":"v8.5.1"}}`)
	if _, err := pc.PingcapV1alpha1().TidbDashboards(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodImage(t, env, "basic-tidb-dashboard-0", "pingcap/tidb-dashboard:v8.5.1")
	waitDashboardCondition(t, env, pc, "basic", "StatefulSetReady", metav1.ConditionTrue)
	patch = []byte(`{"spec":{"ngMonitoring":{"version":"v8.5.1"}}}`)
	if _, err := pc.PingcapV1alpha1().TidbNGMonitorings(env.Namespace).Patch(env.Ctx, "basic", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodImage(t, env, "basic-ng-monitoring-0", "pingcap/ng-monitoring:v8.5.1")
	waitNGMReady(t, env, pc)

	if err := pc.PingcapV1alpha1().TidbDashboards(env.Namespace).Delete(env.Ctx, "basic", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pc.PingcapV1alpha1().TidbNGMonitorings(env.Namespace).Delete(env.Ctx, "basic", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, "basic-tidb-dashboard", "basic-tidb-dashboard-exposed", "basic-ng-monitoring")
	if _, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "early-tidb-dashboard", metav1.GetOptions{}); err != nil {
		t.Errorf("early's StatefulSet went with basic's: %v", err)
	}
}

// waitDashboardCondition waits for the dashboard's Ready condition with
// reason and status at its current generation.
func waitDashboardCondition(t *testing.T, env *framework.Env, pc versioned.Interface, name, reason string, status metav1.ConditionStatus) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, "TidbDashboard "+name+" Ready "+reason, func(ctx context.Context) (bool, error) {
		td, err := pc.PingcapV1alpha1().TidbDashboards(env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(td.Status.Conditions, "Ready")
		framework.Observef(ctx, "ready=%+v phase=%s synced=%t", c, td.Status.Phase, td.Status.Synced)
		return c != nil && c.Reason == reason && c.Status == status && td.Status.ObservedGeneration == td.Generation, nil
	})
}

// waitNGMReady waits until TidbNGMonitoring basic is Ready at its generation.
func waitNGMReady(t *testing.T, env *framework.Env, pc versioned.Interface) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, "TidbNGMonitoring basic Ready", func(ctx context.Context) (bool, error) {
		tngm, err := pc.PingcapV1alpha1().TidbNGMonitorings(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tngm.Status.Conditions, "Ready")
		framework.Observef(ctx, "ready=%+v ngMonitoring=%+v", c, tngm.Status.NGMonitoring.Phase)
		return c != nil && c.Status == metav1.ConditionTrue && tngm.Status.ObservedGeneration == tngm.Generation &&
			tngm.Status.NGMonitoring.Synced && tngm.Status.NGMonitoring.Phase == "Normal", nil
	})
}

// waitWarning waits for a Warning event with reason on the object name.
func waitWarning(t *testing.T, env *framework.Env, name, reason string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, time.Minute, "Warning "+reason+" on "+name, func(ctx context.Context) (bool, error) {
		evs, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Type == corev1.EventTypeWarning && ev.Reason == reason && ev.InvolvedObject.Kind == "TidbDashboard" {
				return true, nil
			}
		}
		return false, nil
	})
}

// waitPodImage waits until the pod runs image (the StatefulSet rolled it).
func waitPodImage(t *testing.T, env *framework.Env, pod, image string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, pod+" runs "+image, func(ctx context.Context) (bool, error) {
		p, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "image %s", p.Spec.Containers[0].Image)
		return slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Image == image }), nil
	})
}

// waitPVRetained waits until the PV bound to pvc has the Retain policy
// (pvReclaimPolicy's default) and the operator's labels for component.
func waitPVRetained(t *testing.T, env *framework.Env, pvc, component string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, time.Minute, "PV of "+pvc+" retained and labelled", func(ctx context.Context) (bool, error) {
		claim, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, pvc, metav1.GetOptions{})
		if err != nil || claim.Spec.VolumeName == "" {
			framework.Observef(ctx, "claim: %v", err)
			return false, nil
		}
		pv, err := env.Kube.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		framework.Observef(ctx, "policy %s labels %v", pv.Spec.PersistentVolumeReclaimPolicy, pv.Labels)
		return pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain &&
			pv.Labels["app.kubernetes.io/component"] == component && pv.Labels["app.kubernetes.io/namespace"] == env.Namespace, nil
	})
}

// waitGone waits until no StatefulSet, Service or ConfigMap of these names is left.
func waitGone(t *testing.T, env *framework.Env, names ...string) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, time.Minute, "objects deleted: "+strings.Join(names, ", "), func(ctx context.Context) (bool, error) {
		for _, n := range names {
			_, e1 := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, n, metav1.GetOptions{})
			_, e2 := env.Kube.CoreV1().Services(env.Namespace).Get(ctx, n, metav1.GetOptions{})
			_, e3 := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(ctx, n, metav1.GetOptions{})
			if !apierrors.IsNotFound(e1) || !apierrors.IsNotFound(e2) || !apierrors.IsNotFound(e3) {
				framework.Observef(ctx, "%s: sts %v, svc %v, cm %v", n, e1, e2, e3)
				return false, nil
			}
		}
		return true, nil
	})
}

func checkDashboardObjects(t *testing.T, env *framework.Env) {
	t.Helper()
	sts := getStatefulSet(t, env, "basic-tidb-dashboard")
	c := mainContainer(t, sts, "tidb-dashboard")
	if c.Image != "pingcap/tidb-dashboard:latest" {
		t.Errorf("image %q", c.Image)
	}
	for _, want := range []string{"--host=0.0.0.0", "--port=12333", "--data-dir=/data", "--pd=http://basic-pd." + env.Namespace + ":2379"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %v lack %s", c.Args, want)
		}
	}
	checkLabels(t, sts.Spec.Template.Labels, "tidb-dashboard", "tidb-dashboard")
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" {
		t.Errorf("claims %+v", sts.Spec.VolumeClaimTemplates)
	}
	svc, err := env.Kube.CoreV1().Services(env.Namespace).Get(env.Ctx, "basic-tidb-dashboard-exposed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 12333 || svc.Spec.Selector["app.kubernetes.io/instance"] != "basic" {
		t.Errorf("service %+v", svc.Spec)
	}
}

func checkNGMObjects(t *testing.T, env *framework.Env) {
	t.Helper()
	sts := getStatefulSet(t, env, "basic-ng-monitoring")
	c := mainContainer(t, sts, "ng-monitoring")
	if c.Image != "pingcap/ng-monitoring:v8.5.0" {
		t.Errorf("image %q", c.Image)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 12020 {
		t.Errorf("ports %+v", c.Ports)
	}
	checkLabels(t, sts.Spec.Template.Labels, "tidb-ng-monitoring", "ng-monitoring")
	svc, err := env.Kube.CoreV1().Services(env.Namespace).Get(env.Ctx, "basic-ng-monitoring", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 12020 {
		t.Errorf("service %+v", svc.Spec)
	}
	cm, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(env.Ctx, "basic-ng-monitoring", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, script := cm.Data["config-file"], cm.Data["startup-script"]
	for _, want := range []string{`endpoints = ['basic-pd.` + env.Namespace + `:2379']`, `path = '/var/lib/ng-monitoring'`, `level = 'info'`} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %s:\n%s", want, cfg)
		}
	}
	if !strings.Contains(script, "--retention-period 5d") {
		t.Errorf("start script lacks the retention period:\n%s", script)
	}
}

func getStatefulSet(t *testing.T, env *framework.Env, name string) *appsv1.StatefulSet {
	t.Helper()
	sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sts
}

func mainContainer(t *testing.T, sts *appsv1.StatefulSet, name string) corev1.Container {
	t.Helper()
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("StatefulSet %s has no container %s", sts.Name, name)
	return corev1.Container{}
}

func checkLabels(t *testing.T, got map[string]string, name, component string) {
	t.Helper()
	want := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/component": component,
		"app.kubernetes.io/instance": "basic", "app.kubernetes.io/managed-by": "tidb-operator"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, got[k], v, got)
		}
	}
}
