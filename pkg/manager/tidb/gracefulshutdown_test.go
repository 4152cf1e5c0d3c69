package tidb

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// shutdownFixture is a cluster with PD, TiKV and two Ready TiDB pods, all
// Normal; annotations and readiness are set per test.
func shutdownFixture(t *testing.T, annotated map[int32]string, ready map[int32]bool) (*Component, *kubefake.Clientset, *v1alpha1.TidbCluster, map[int32]*corev1.Pod) {
	t.Helper()
	kube := kubefake.NewClientset()
	c := NewWithClient(&component.Env{Writer: apply.NewApplier(kube, record.NewFakeRecorder(10), apply.Caches{}),
		Clock: clocktesting.NewFakePassiveClock(time.Now())}, nil)
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"},
		Spec: v1alpha1.TidbClusterSpec{PD: &v1alpha1.PDSpec{}, TiKV: &v1alpha1.TiKVSpec{}, TiDB: &v1alpha1.TiDBSpec{}}}
	tc.Status.PD.Phase, tc.Status.TiKV.Phase, tc.Status.TiDB.Phase = v1alpha1.NormalPhase, v1alpha1.NormalPhase, v1alpha1.NormalPhase
	pods := map[int32]*corev1.Pod{}
	for o := int32(0); o < 2; o++ {
		name := "basic-tidb-" + string(rune('0'+o))
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
		if v, ok := annotated[o]; ok {
			p.Annotations = map[string]string{label.AnnTiDBGracefulShutdown: v}
		}
		status := corev1.ConditionTrue
		if r, ok := ready[o]; ok && !r {
			status = corev1.ConditionFalse
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
		if _, err := kube.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods[o] = p
	}
	kube.ClearActions()
	return c, kube, tc, pods
}

func shutdown(t *testing.T, c *Component, tc *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) *flow.RequeueError {
	t.Helper()
	ctx, revisits := flow.WithRevisits(context.Background())
	if err := c.MaintainPods(ctx, tc, pods); err != nil {
		t.Fatalf("MaintainPods: %v", err)
	}
	re, _ := flow.AsRequeue(revisits.Err())
	return re
}

func deletedPods(kube *kubefake.Clientset) []k8stesting.DeleteActionImpl {
	var out []k8stesting.DeleteActionImpl
	for _, a := range kube.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestGracefulShutdownDeletesTheAnnotatedPodOnly(t *testing.T) {
	t.Parallel()
	c, kube, tc, pods := shutdownFixture(t, map[int32]string{1: label.EvictLeaderDeletePod}, nil)
	if re := shutdown(t, c, tc, pods); re != nil {
		t.Errorf("revisit %v for a cluster at rest", re)
	}
	d := deletedPods(kube)
	if len(d) != 1 || d[0].Name != "basic-tidb-1" || *d[0].DeleteOptions.Preconditions.UID != "uid-basic-tidb-1" {
		t.Errorf("deletes %+v, want basic-tidb-1 under its UID", d)
	}
}

func TestGracefulShutdownWaits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		mutate func(tc *v1alpha1.TidbCluster)
		ready  map[int32]bool
		value  string
		want   string // in the revisit's reason; "" = no revisit
	}{
		{name: "PD upgrades", mutate: func(tc *v1alpha1.TidbCluster) { tc.Status.PD.Phase = v1alpha1.UpgradePhase }, want: "PD is in phase Upgrade"},
		{name: "TiKV scales", mutate: func(tc *v1alpha1.TidbCluster) { tc.Status.TiKV.Phase = v1alpha1.ScalePhase }, want: "TiKV is in phase Scale"},
		{name: "TiDB upgrades", mutate: func(tc *v1alpha1.TidbCluster) { tc.Status.TiDB.Phase = v1alpha1.UpgradePhase }, want: "TiDB is in phase Upgrade"},
		{name: "another TiDB is not Ready", ready: map[int32]bool{1: false}, want: "until basic-tidb-1 is Ready"},
		{name: "unknown value", value: "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			value := label.EvictLeaderDeletePod
			if tt.value != "" {
				value = tt.value
			}
			c, kube, tc, pods := shutdownFixture(t, map[int32]string{0: value}, tt.ready)
			if tt.mutate != nil {
				tt.mutate(tc)
			}
			re := shutdown(t, c, tc, pods)
			if (re == nil) != (tt.want == "") || (re != nil && !strings.Contains(re.Reason, tt.want)) {
				t.Errorf("revisit %v, want one naming %q", re, tt.want)
			}
			if d := deletedPods(kube); len(d) != 0 {
				t.Errorf("deleted %+v while it should wait", d)
			}
		})
	}
}
