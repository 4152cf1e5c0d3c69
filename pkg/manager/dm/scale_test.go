package dm

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/dmapi"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// seedPods puts n Ready pods of component on revision r1 (as seed gives
// the StatefulSets) and their data PVCs into the API and the caches.
func (f *syncFixture) seedPods(t *testing.T, component string, n int32) {
	t.Helper()
	ctx := context.Background()
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(ctx, names.Member("basic", component), metav1.GetOptions{})
	must(t, err)
	for o := range n {
		l := map[string]string{appsv1.ControllerRevisionHashLabelKey: "r1"}
		for k, v := range sts.Spec.Template.Labels {
			l[k] = v
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: names.Pod("basic", component, o), Namespace: "ns", Labels: l},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: names.PVC(component, "basic", component, o),
			Namespace: "ns", Labels: sts.Spec.Template.Labels, UID: "uid"}}
		for _, obj := range []struct {
			create func() error
			add    func() error
		}{
			{func() error {
				_, err := f.kube.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{})
				return err
			},
				func() error { return f.inf.Core().V1().Pods().Informer().GetIndexer().Update(pod) }},
			{func() error {
				_, err := f.kube.CoreV1().PersistentVolumeClaims("ns").Create(ctx, pvc, metav1.CreateOptions{})
				return err
			}, func() error { return f.inf.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Update(pvc) }},
		} {
			_ = obj.create() // already there on a second seed
			must(t, obj.add())
		}
	}
}

// TestMasterScaleInDeletesTheMemberFirst: dm-master 3 → 2 evicts nothing
// (the leader is 0), deletes member 2 from dm-master, marks its PVC
// defer-deleting and lowers the StatefulSet's replicas.
func TestMasterScaleInDeletesTheMemberFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	dc := parseDM(t, basicDM)
	dc.Spec.Master.Replicas = 3
	dc.Spec.Worker = nil
	f.members = f.members[:1]
	_ = f.sync(dc) // creates the StatefulSet
	f.seed(t)
	f.seedPods(t, names.DMMasterComponent, 3)
	dmc := f.ctl.Cluster("ns", "basic")
	dmc.SetMasters(dmapi.MasterMember{Name: "basic-dm-master-0", Alive: true}, dmapi.MasterMember{Name: "basic-dm-master-1", Alive: true},
		dmapi.MasterMember{Name: "basic-dm-master-2", Alive: true})
	dmc.SetLeader("basic-dm-master-0")
	must(t, f.sync(dc)[0])
	if dc.Status.Master.Phase != v1alpha1.NormalPhase {
		t.Fatalf("phase = %s", dc.Status.Master.Phase)
	}
	dc.Spec.Master.Replicas = 2
	err := f.sync(dc)[0]
	if calls := dmc.CallsOf(dmapi.MethodDeleteMaster); len(calls) != 1 || calls[0].Name != "basic-dm-master-2" {
		t.Fatalf("delete calls = %v (sync: %v)", dmc.Calls(), err)
	}
	sts, gerr := f.kube.AppsV1().StatefulSets("ns").Get(ctx, "basic-dm-master", metav1.GetOptions{})
	must(t, gerr)
	pvc, perr := f.kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "dm-master-basic-dm-master-2", metav1.GetOptions{})
	must(t, perr)
	if *sts.Spec.Replicas != 2 || pvc.Annotations[label.AnnPVCDeferDeleting] == "" {
		t.Fatalf("replicas %d, PVC annotations %v (sync: %v)", *sts.Spec.Replicas, pvc.Annotations, err)
	}
}

// TestMasterUpgradeEvictsTheLeaderFirst: a new version restarts the
// highest ordinal first; it leads, so its leadership is evicted and the
// restart waits.
func TestMasterUpgradeEvictsTheLeaderFirst(t *testing.T) {
	t.Parallel()
	f := newSyncFixture()
	dc := parseDM(t, basicDM)
	dc.Spec.Master.Replicas = 3
	dc.Spec.Worker = nil
	f.members = f.members[:1]
	_ = f.sync(dc)
	f.seed(t)
	f.seedPods(t, names.DMMasterComponent, 3)
	dmc := f.ctl.Cluster("ns", "basic")
	dmc.SetMasters(dmapi.MasterMember{Name: "basic-dm-master-0", Alive: true}, dmapi.MasterMember{Name: "basic-dm-master-1", Alive: true},
		dmapi.MasterMember{Name: "basic-dm-master-2", Alive: true})
	dmc.SetLeader("basic-dm-master-2")
	must(t, f.sync(dc)[0])
	dc.Spec.Version = "v8.5.8"
	err := f.sync(dc)[0]
	// The new template is applied: the StatefulSet now has revision r2.
	sts, gerr := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-dm-master", metav1.GetOptions{})
	must(t, gerr)
	sts.Status = appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, CurrentRevision: "r1", UpdateRevision: "r2",
		ObservedGeneration: sts.Generation}
	must(t, f.inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	if err == nil {
		err = f.sync(dc)[0]
	}
	if r := requeueReason(err); r == "" {
		t.Fatalf("upgrade of the leader did not wait: %v", err)
	}
	if calls := dmc.CallsOf(dmapi.MethodEvictLeader); len(calls) != 1 || calls[0].Name != "basic-dm-master-2" {
		t.Fatalf("evict calls = %v (sync: %v)", dmc.Calls(), err)
	}
}
