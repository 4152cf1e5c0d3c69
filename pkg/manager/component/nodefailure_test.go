package component

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

func nodeFailureOver(t *testing.T, kube *kubefake.Clientset, rec record.EventRecorder) *NodeFailure {
	t.Helper()
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n1"}}
	if err := pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return NewNodeFailure(&Env{Kube: kube, Pods: corelisters.NewPodLister(pods), Recorder: rec,
		Clock: clocktesting.NewFakeClock(now), NodeFailure: NodeFailureConfig{Detect: true}})
}

// TestHostDownReadsEachNodeOncePerSync: the node is read by one GET per
// sync, however many records ask.
func TestHostDownReadsEachNodeOncePerSync(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}})
	n := nodeFailureOver(t, kube, record.NewFakeRecorder(5))
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	ctx := flow.WithMemo(context.Background())
	since := time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		reason, err := n.HostDown(ctx, tc, "p", since)
		if err != nil || reason != ReasonNodeFailure {
			t.Fatalf("HostDown = %q, %v; want NodeFailure", reason, err)
		}
	}
	if got := len(kube.Actions()); got != 1 {
		t.Fatalf("%d API calls, want one node GET", got)
	}
}

// TestHostDownWithoutNodePermission: a forbidden node read is a Warning
// naming the permission, and the host counts as up (the sync goes on).
func TestHostDownWithoutNodePermission(t *testing.T) {
	t.Parallel()
	kube := kubefake.NewClientset()
	kube.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "n1", nil)
	})
	rec := record.NewFakeRecorder(5)
	n := nodeFailureOver(t, kube, rec)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	reason, err := n.HostDown(context.Background(), tc, "p", time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC))
	if err != nil || reason != "" {
		t.Fatalf("HostDown = %q, %v; want not down, no error", reason, err)
	}
	if e := <-rec.Events; !strings.Contains(e, "Warning "+ReasonFailedDetectNodeFailure) || !strings.Contains(e, "get on nodes") {
		t.Fatalf("event %q", e)
	}
}
