//go:build integration

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const classCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: vac
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
    volumeAttributesClassName: %s
    requests:
      storage: 100Gi
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
`

// TestVolumeAttributesClassChangeMovesPVCsOneMemberAtATime runs the operator
// with --features VolumeModifying=true: a changed
// spec.tikv.volumeAttributesClassName moves the three TiKV PVCs to the new
// class one member at a time (the simulator plays the driver's modify),
// then the StatefulSet is created again with the new class in its claim
// templates — no pod is replaced — and nothing is named Unsupported.
func TestVolumeAttributesClassChangeMovesPVCsOneMemberAtATime(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	silver, gold := env.Namespace+"-silver", env.Namespace+"-gold"
	for _, name := range []string{silver, gold} {
		vac := &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: name}, DriverName: "kwok.x-k8s.io",
			Parameters: map[string]string{"iops": name}}
		if _, err := env.Kube.StorageV1().VolumeAttributesClasses().Create(env.Ctx, vac, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create VolumeAttributesClass %s: %v", name, err)
		}
		t.Cleanup(func() {
			_ = env.Kube.StorageV1().VolumeAttributesClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	operator.StartManager(t, env.Namespace, func(o *app.Options) { o.Features = "VolumeModifying=true" })
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), name: "vac"}
	framework.ApplyYAML(t, env.Ctx, fmt.Sprintf(classCluster, silver), env.Namespace)
	f.waitReady(t, "vac is Ready with its TiKV PVCs in "+silver, func(*v1alpha1.TidbCluster) bool {
		return tikvClassesCurrent(t, f, silver)
	})
	before := clusterPodUIDs(t, f)
	stsBefore, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "vac-tikv", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	most := f.watchMostModifying(t)

	f.patch(t, "tikv", fmt.Sprintf(`{"volumeAttributesClassName":%q}`, gold))
	f.waitReady(t, "every TiKV PVC is in "+gold+" and the StatefulSet names it", func(tc *v1alpha1.TidbCluster) bool {
		sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(env.Ctx, "vac-tikv", metav1.GetOptions{})
		if err != nil || sts.UID == stsBefore.UID || len(sts.Spec.VolumeClaimTemplates) == 0 {
			return false
		}
		c := sts.Spec.VolumeClaimTemplates[0].Spec.VolumeAttributesClassName
		return c != nil && *c == gold && tikvClassesCurrent(t, f, gold) &&
			meta.FindStatusCondition(tc.Status.TiKV.Conditions, component.ConditionVolumeModifying) == nil
	})
	if n, at := most(); n != 1 {
		t.Errorf("at most %d TiKV PVCs were being modified at once (%s), want exactly 1", n, at)
	}
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonVolumeModifying, "tikv-vac-tikv-0")
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonVolumeModified, "tikv")
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonStatefulSetRecreating, "vac-tikv")
	if after := clusterPodUIDs(t, f); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("pods were replaced by the class change:\n before %v\n after  %v", before, after)
	}
	tc, err := f.get(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterUnsupported); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("the class change is acted on, yet Unsupported says %q", c.Message)
	}
}

// tikvClassesCurrent reports whether the three TiKV PVCs of f name class
// and the driver reports it current.
func tikvClassesCurrent(t *testing.T, f *clusterFixture, class string) bool {
	t.Helper()
	for o := 0; o < 3; o++ {
		pvc, err := f.env.Kube.CoreV1().PersistentVolumeClaims(f.env.Namespace).Get(f.env.Ctx, fmt.Sprintf("tikv-vac-tikv-%d", o), metav1.GetOptions{})
		if err != nil {
			return false
		}
		spec, cur := pvc.Spec.VolumeAttributesClassName, pvc.Status.CurrentVolumeAttributesClassName
		if spec == nil || *spec != class || cur == nil || *cur != class {
			framework.Observef(f.env.Ctx, "PVC %s: spec class %v, current %v", pvc.Name, spec, cur)
			return false
		}
	}
	return true
}

// watchMostModifying watches the TiKV PVCs and returns a function that
// stops the watch and says how many were at once asking for a class the
// driver did not report current yet, and which.
func (f *clusterFixture) watchMostModifying(t *testing.T) func() (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(f.env.Ctx)
	w, err := f.env.Kube.CoreV1().PersistentVolumeClaims(f.env.Namespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + f.name + ",app.kubernetes.io/component=tikv"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	most, when := 0, ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		state := map[string]*corev1.PersistentVolumeClaim{}
		for ev := range w.ResultChan() {
			if pvc, ok := ev.Object.(*corev1.PersistentVolumeClaim); ok {
				state[pvc.Name] = pvc
			}
			var modifying []string
			for _, p := range state {
				spec, cur := p.Spec.VolumeAttributesClassName, p.Status.CurrentVolumeAttributesClassName
				if spec != nil && cur != nil && *spec != *cur {
					modifying = append(modifying, p.Name)
				}
			}
			mu.Lock()
			if len(modifying) > most {
				most, when = len(modifying), fmt.Sprint(modifying)
			}
			mu.Unlock()
		}
	}()
	return func() (int, string) {
		cancel()
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return most, when
	}
}
