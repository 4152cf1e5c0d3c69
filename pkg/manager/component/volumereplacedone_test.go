package component_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// setCachedPod replaces basic-pd-2 in the pod cache by what change makes
// of its current version.
func setCachedPod(t *testing.T, f *fixture, change func(p *corev1.Pod)) {
	t.Helper()
	pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-2")
	if err != nil {
		t.Fatal(err)
	}
	pod = pod.DeepCopy()
	change(pod)
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
}

// TestReplaceVolumeFinishesOnlyWhenThePodIsBack: after the member's PVCs
// and pod are deleted the replacement stays in progress (condition True,
// volReplaceInProgress, no ReplaceVolumeFinished) while the old pod
// terminates and while the new one is not Ready; it finishes once the new
// pod is Ready.
func TestReplaceVolumeFinishesOnlyWhenThePodIsBack(t *testing.T) {
	t.Parallel()
	f, r, rec := replaceFixture(t, 0)
	r.left = true
	annotateReplace(t, f, "basic-pd-2", label.ReplaceVolumeTrue)
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	ctx, _ := flow.WithRevisits(context.Background())
	if err := f.mgr.Sync(ctx, tc); err != nil {
		t.Fatalf("sync: %v", err)
	}
	drain(rec)
	inProgress := func(step string) {
		t.Helper()
		ctx, revisits := flow.WithRevisits(context.Background())
		if err := f.mgr.Sync(ctx, tc); err != nil {
			t.Fatalf("%s: sync: %v", step, err)
		}
		s := tc.Status.PD.ComponentStatus
		c := meta.FindStatusCondition(s.Conditions, component.ConditionVolumeReplacing)
		if !s.VolReplaceInProgress || c == nil || !strings.Contains(c.Message, "basic-pd-2") {
			t.Errorf("%s: volReplaceInProgress=%v condition %+v, want True naming basic-pd-2", step, s.VolReplaceInProgress, c)
		}
		if ev := strings.Join(drain(rec), "\n"); strings.Contains(ev, component.ReasonReplaceVolumeFinished) {
			t.Errorf("%s: events %q, want no ReplaceVolumeFinished yet", step, ev)
		}
		if _, ok := flow.AsRequeue(revisits.Err()); !ok {
			t.Errorf("%s: no revisit asked", step)
		}
	}
	now := metav1.Now()
	setCachedPod(t, f, func(p *corev1.Pod) { p.DeletionTimestamp = &now })
	inProgress("old pod terminating")
	setCachedPod(t, f, func(p *corev1.Pod) {
		p.DeletionTimestamp, p.Annotations, p.UID = nil, nil, "new"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	})
	inProgress("new pod not Ready")
	setCachedPod(t, f, func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	})
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatalf("sync: %v", err)
	}
	s := tc.Status.PD.ComponentStatus
	if s.VolReplaceInProgress || meta.FindStatusCondition(s.Conditions, component.ConditionVolumeReplacing) != nil {
		t.Errorf("volReplaceInProgress=%v conditions %+v, want the replacement finished", s.VolReplaceInProgress, s.Conditions)
	}
	if ev := strings.Join(drain(rec), "\n"); !strings.Contains(ev, "Normal "+component.ReasonReplaceVolumeFinished) {
		t.Errorf("events %q, want ReplaceVolumeFinished", ev)
	}
}
