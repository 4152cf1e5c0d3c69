package pd

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// TestOrphanSweepLeavesAMemberWhosePodExists: a spare PD pod (volume
// replacement, scale-out) can join PD before the StatefulSet's status
// counts it; its member is no orphan while the pod exists, and is removed
// once the pod is gone.
func TestOrphanSweepLeavesAMemberWhosePodExists(t *testing.T) {
	t.Parallel()
	ctl := pdapi.NewFakeControl()
	c := newFailoverPD(ctl, kubefake.NewClientset(), transferNow)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	spare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-3", Namespace: "ns"}}
	if err := pods.Add(spare); err != nil {
		t.Fatal(err)
	}
	c.meta = &Meta{pods: corelisters.NewPodLister(pods)}
	tc := membersTC([]bool{true, true, true, true}, transferNow)
	tc.Spec.PD.Replicas = 3
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{Replicas: 3} // the StatefulSet controller has not counted the spare yet
	if err := c.removeOrphanMembers(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if w := pdWrites(ctl); len(w) != 0 {
		t.Fatalf("PD writes %v while basic-pd-3's pod exists, want none", w)
	}
	if err := pods.Delete(spare); err != nil {
		t.Fatal(err)
	}
	if err := c.removeOrphanMembers(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pdWrites(ctl)); got != "[DeleteMemberByID:13]" {
		t.Fatalf("PD writes %s once the pod is gone, want basic-pd-3's member deleted", got)
	}
}

// TestObserveAsksPDOnlyWithAReadyPod: while no PD pod is Ready (being
// scheduled, started, or all failed) PD's Service has no endpoint, so the
// observation asks nothing and reports PD unsynced; once a pod is Ready in
// the cache, PD is asked.
func TestObserveAsksPDOnlyWithAReadyPod(t *testing.T) {
	t.Parallel()
	ctl := pdapi.NewFakeControl()
	c := newFailoverPD(ctl, kubefake.NewClientset(), transferNow)
	tc := membersTC([]bool{true}, transferNow)
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-0", Namespace: "ns", Labels: component.Labels(tc, names.PD)}}
	if err := pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	c.meta = &Meta{pods: corelisters.NewPodLister(pods)}
	sts := &appsv1.StatefulSet{}
	if err := c.Observe(context.Background(), tc, sts); err == nil || tc.Status.PD.Synced {
		t.Fatalf("Observe with no Ready PD pod: err %v, synced %v; want an error and unsynced", err, tc.Status.PD.Synced)
	}
	if calls := ctl.ClusterClient("ns", "basic").Calls(); len(calls) != 0 {
		t.Fatalf("PD was asked %v with no Ready pod behind its Service", calls)
	}
	ready := pod.DeepCopy()
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := pods.Update(ready); err != nil {
		t.Fatal(err)
	}
	_ = c.Observe(context.Background(), tc, sts)
	if calls := ctl.ClusterClient("ns", "basic").Calls(); len(calls) == 0 {
		t.Fatal("PD was not asked once a pod is Ready")
	}
}
