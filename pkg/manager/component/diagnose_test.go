package component_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// TestDiagnoseNamesWhatKeepsPodsDown makes PD pod 0 unable to run in
// several ways and checks that the sync records the concrete cause, and
// that a pod only just created is left alone (no API read, no blocker).
func TestDiagnoseNamesWhatKeepsPodsDown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		pod  func(*corev1.Pod)
		age  time.Duration
		want string
	}{
		{name: "unschedulable", age: time.Minute, want: "pod basic-pd-0 is not scheduled: Unschedulable: 0/3 nodes are available",
			pod: func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: "0/3 nodes are available"}}
			}},
		{name: "no scheduler takes it", age: time.Minute, want: `no scheduler has taken it (schedulerName "my-scheduler")`,
			pod: func(p *corev1.Pod) { p.Status.Conditions = nil; p.Spec.SchedulerName = "my-scheduler" }},
		{name: "image pull", age: time.Minute, want: "container pd is waiting: ImagePullBackOff: no such image",
			pod: func(p *corev1.Pod) {
				p.Spec.NodeName = "n1"
				p.Status.Conditions = nil
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pd",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "no such image"}}}}
			}},
		{name: "just created", age: time.Second, pod: func(p *corev1.Pod) { p.Status.Conditions = nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			healthyPD(f.pd)
			_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
			f.seed(t)
			pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-0")
			if err != nil {
				t.Fatal(err)
			}
			pod = pod.DeepCopy()
			pod.CreationTimestamp = metav1.NewTime(f.deps.FakeClock.Now().Add(-c.age))
			pod.Status.Phase = corev1.PodPending
			c.pod(pod)
			mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
			f.deps.FakeKube.ClearActions()

			ctx, blockers := flow.WithBlockers(context.Background())
			_ = f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
			got := strings.Join(blockers.List(), "; ")
			if c.want == "" {
				if got != "" || len(f.deps.FakeKube.Actions()) != 0 {
					t.Fatalf("a pod just created must be left alone: blockers %q, actions %v", got, f.deps.FakeKube.Actions())
				}
				return
			}
			if !strings.Contains(got, c.want) {
				t.Fatalf("blockers %q, want one containing %q", got, c.want)
			}
		})
	}
}

// TestDiagnoseReadsTheAPIOnlyForStuckPods covers the causes found through
// API reads: a StatefulSet's FailedCreate event and a missing Secret.
func TestDiagnoseReadsTheAPIOnlyForStuckPods(t *testing.T) {
	t.Parallel()
	t.Run("pod not created", func(t *testing.T) {
		t.Parallel()
		f := newFixture()
		healthyPD(f.pd)
		_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
		f.seed(t)
		mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Delete(
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-pd-1", Namespace: "ns"}}))
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "ns"}, Reason: "FailedCreate",
			InvolvedObject: corev1.ObjectReference{Kind: "StatefulSet", Name: "basic-pd"},
			Message:        `pods "basic-pd-1" is forbidden: no PriorityClass with name gold was found`}
		if _, err := f.deps.FakeKube.CoreV1().Events("ns").Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctx, blockers := flow.WithBlockers(context.Background())
		_ = f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
		if got := strings.Join(blockers.List(), "; "); !strings.Contains(got, "cannot create pod basic-pd-1: pods \"basic-pd-1\" is forbidden: no PriorityClass") {
			t.Fatalf("blockers %q", got)
		}
	})
	t.Run("missing TLS Secret", func(t *testing.T) {
		t.Parallel()
		f := newFixture()
		healthyPD(f.pd)
		tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
		tc.Spec.TLSCluster = &v1alpha1.TLSCluster{Enabled: true}
		_ = f.mgr.Sync(context.Background(), tc.DeepCopy())
		f.seed(t)
		pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-0")
		if err != nil {
			t.Fatal(err)
		}
		pod = pod.DeepCopy()
		pod.CreationTimestamp = metav1.NewTime(f.deps.FakeClock.Now().Add(-time.Hour))
		pod.Status.Conditions = nil
		mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
		ctx, blockers := flow.WithBlockers(context.Background())
		_ = f.mgr.Sync(ctx, tc.DeepCopy())
		if got := strings.Join(blockers.List(), "; "); !strings.Contains(got, "Secret basic-pd-cluster-secret, mounted by the pods of basic-pd") {
			t.Fatalf("blockers %q", got)
		}
	})
}
