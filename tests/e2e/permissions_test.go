//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestNamespacedWithoutClusterPermissions installs the chart's RBAC with
// clusterScoped=false and every controllerManager.clusterPermissions value
// off, and runs the operator with it (and --detect-node-failure): the
// cluster still becomes Ready, its Unsupported condition and one Warning
// name each feature the operator cannot run with the chart value that
// grants it, no PV gets the operator's labels, and a storage increase
// leaves the PVCs alone with a condition naming the missing permission.
// tests/privilege checks afterwards that no request was refused: the
// operator did not even try what it may not do.
func TestNamespacedWithoutClusterPermissions(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	off := []string{"controllerManager.clusterPermissions.nodes=false",
		"controllerManager.clusterPermissions.persistentvolumes=false", "controllerManager.clusterPermissions.storageclasses=false"}
	mgr := operator.StartManagerWith(t, env.Namespace, &operator.Chart{Set: off, Namespaced: true}, func(o *app.Options) {
		o.Controller.DetectNodeFailure = true
	})
	if _, err := env.Kube.RbacV1().ClusterRoles().Get(env.Ctx, mgr.Release.Name+":tidb-controller-manager", metav1.GetOptions{}); err == nil {
		t.Fatal("the chart rendered a ClusterRole although every clusterPermissions value is off")
	}
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), name: "resize"}
	framework.ApplyYAML(t, env.Ctx, fmt.Sprintf(resizeCluster, "kwok-expandable"), env.Namespace)
	f.waitReady(t, "resize is Ready without cluster-wide permissions", func(*v1alpha1.TidbCluster) bool { return true })

	tc, err := f.get(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Unsupported = %+v, want True", cond)
	}
	for _, want := range []string{component.NodePermission, component.PersistentVolumePermission, component.StorageClassPermission,
		"--detect-node-failure", "spec.pvReclaimPolicy"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("Unsupported lacks %q: %s", want, cond.Message)
		}
	}
	waitEvent(t, env, corev1.EventTypeWarning, "Unsupported", component.StorageClassPermission)
	checkNoOperatorPVLabels(t, env)

	f.patch(t, "tikv", `{"requests":{"storage":"200Gi"}}`)
	framework.WaitFor(t, env.Ctx, readyTimeout, "TiKV's growth refused for want of the StorageClass permission", func(ctx context.Context) (bool, error) {
		tc, err := f.get(ctx)
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(tc.Status.TiKV.Conditions, component.ConditionVolumeResizing)
		framework.Observef(ctx, "TiKV VolumeResizing %+v", c)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, component.StorageClassPermission), nil
	})
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, "tikv-resize-tikv-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "100Gi" {
		t.Errorf("TiKV's PVC asks for %s, want it left at 100Gi", got.String())
	}
}

// checkNoOperatorPVLabels asserts that no PV bound to a claim of the test
// namespace carries the operator's labels: it may not patch PVs.
func checkNoOperatorPVLabels(t *testing.T, env *framework.Env) {
	t.Helper()
	pvs, err := env.Kube.CoreV1().PersistentVolumes().List(env.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound := 0
	for _, pv := range pvs.Items {
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Namespace != env.Namespace {
			continue
		}
		bound++
		if _, ok := pv.Labels[label.ManagedByLabelKey]; ok {
			t.Errorf("PV %s was labelled without the PV permission: %v", pv.Name, pv.Labels)
		}
	}
	if bound == 0 {
		t.Error("no PV is bound to the cluster's PVCs; the check saw nothing")
	}
}
