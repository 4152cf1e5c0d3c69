//go:build integration

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const resizeCluster = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: resize
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
    storageClassName: %s
    requests:
      storage: 100Gi
  tidb:
    baseImage: pingcap/tidb
    replicas: 1
`

// TestVolumesGrowInPlaceOneMemberAtATime raises the storage of TiKV (in a
// StorageClass kwok-expandable, which allows expansion; the simulator plays
// the CSI resizer)
// and of PD (KWOK's default class, which does not): TiKV's PVCs grow one
// member at a time with no pod restarted and status.tikv.volumes tells the
// progress; PD's stay as they are and its condition and a Warning say why.
// It runs alone (no t.Parallel): under the load of parallel tests a PVC's
// status.capacity was seen falling back to the old size after the
// simulator's resizer had expanded it (the resizer then expands it again),
// so two PVCs looked expanding at once although the operator asked for one
// at a time.
func TestVolumesGrowInPlaceOneMemberAtATime(t *testing.T) {
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	// kwok-expandable: KWOK's volume class with allowVolumeExpansion (hack/lib/local-pki.sh).
	sc := "kwok-expandable"
	operator.StartManager(t, env.Namespace, nil)
	f := &clusterFixture{env: env, pc: versioned.NewForConfigOrDie(env.Config), name: "resize"}
	framework.ApplyYAML(t, env.Ctx, fmt.Sprintf(resizeCluster, sc), env.Namespace)
	f.waitReady(t, "resize is Ready", func(tc *v1alpha1.TidbCluster) bool {
		v := tc.Status.TiKV.Volumes["tikv"]
		return v != nil && v.BoundCount == 3 && v.ModifiedCount == 3
	})
	before := clusterPodUIDs(t, f)
	most := f.watchMostExpanding(t, "tikv")

	f.patch(t, "tikv", `{"requests":{"storage":"200Gi"}}`)
	f.patch(t, "pd", `{"requests":{"storage":"20Gi"}}`)
	f.waitReady(t, "every TiKV PVC has 200Gi", func(tc *v1alpha1.TidbCluster) bool {
		v := tc.Status.TiKV.Volumes["tikv"]
		return v != nil && v.ModifiedCount == 3 && v.CurrentCapacity.Cmp(resource.MustParse("200Gi")) == 0 &&
			meta.FindStatusCondition(tc.Status.TiKV.Conditions, component.ConditionVolumeResizing) == nil
	})
	if n, at := most(); n != 1 {
		t.Errorf("at most %d TiKV PVCs were expanding at once (%s), want exactly 1", n, at)
	}
	waitEvent(t, env, corev1.EventTypeNormal, component.ReasonVolumeResized, "tikv")
	waitEvent(t, env, corev1.EventTypeWarning, component.ReasonVolumeResizeRefused, "does not allow volume expansion")
	tc, err := f.get(env.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(tc.Status.PD.Conditions, component.ConditionVolumeResizing); c == nil ||
		c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "pd-resize-pd-0") {
		t.Errorf("PD condition %+v, want False naming pd-resize-pd-0", c)
	}
	pvc, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(env.Ctx, "pd-resize-pd-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "10Gi" {
		t.Errorf("PD's PVC asks for %s, want it left at 10Gi", got.String())
	}
	if after := clusterPodUIDs(t, f); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("pods were replaced by the resize:\n before %v\n after  %v", before, after)
	}
}

// clusterPodUIDs lists the cluster's pods as name=uid, sorted.
func clusterPodUIDs(t *testing.T, f *clusterFixture) []string {
	t.Helper()
	pods, err := f.env.Kube.CoreV1().Pods(f.env.Namespace).List(f.env.Ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + f.name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name+"="+string(p.UID))
	}
	sort.Strings(out)
	return out
}

// watchMostExpanding watches the component's PVCs and returns a function
// that stops the watch and says how many were at once asking for more than
// they had, and which.
func (f *clusterFixture) watchMostExpanding(t *testing.T, comp string) func() (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(f.env.Ctx)
	w, err := f.env.Kube.CoreV1().PersistentVolumeClaims(f.env.Namespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + f.name + ",app.kubernetes.io/component=" + comp})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	most, when := 0, ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		state := map[types.UID]*corev1.PersistentVolumeClaim{}
		for ev := range w.ResultChan() {
			pvc, ok := ev.Object.(*corev1.PersistentVolumeClaim)
			if !ok {
				continue
			}
			state[pvc.UID] = pvc
			var expanding []string
			for _, p := range state {
				want, have := p.Spec.Resources.Requests[corev1.ResourceStorage], p.Status.Capacity[corev1.ResourceStorage]
				if !have.IsZero() && want.Cmp(have) > 0 {
					expanding = append(expanding, p.Name)
				}
			}
			mu.Lock()
			if len(expanding) > most {
				most, when = len(expanding), fmt.Sprint(expanding)
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
