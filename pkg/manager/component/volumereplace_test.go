package component_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
)

// replacer is PD in the skeleton with a VolumeReplacer hook whose member
// leaves once left is true, counting the calls.
type replacer struct {
	observedComponent
	spare int32
	left  bool
	calls []string
}

func (r *replacer) SpareVolumeReplicas(*v1alpha1.TidbCluster) int32 { return r.spare }

func (r *replacer) PrepareVolumeReplace(_ context.Context, _ *v1alpha1.TidbCluster, pod *corev1.Pod) error {
	r.calls = append(r.calls, pod.Name)
	if r.left {
		return nil
	}
	return flow.Requeue("member %s still leaving", pod.Name)
}

// replaceFixture is a converged three-member component whose pods have
// their PVCs, the recorder capturing events, and the replacer hook.
func replaceFixture(t *testing.T, spare int32) (*fixture, *replacer, *record.FakeRecorder) {
	t.Helper()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	for o := 0; o < 3; o++ {
		seedPVC(t, f, fmt.Sprintf("pd-basic-pd-%d", o), "1Gi", "")
		pod, err := f.deps.PodLister.Pods("ns").Get(fmt.Sprintf("basic-pd-%d", o))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.deps.KubeClient.CoreV1().Pods("ns").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
	if err != nil {
		t.Fatal(err)
	}
	sts = sts.DeepCopy()
	sts.Status.UpdatedReplicas = *sts.Spec.Replicas
	mustAdd(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	rec := record.NewFakeRecorder(100)
	f.env.Recorder = rec
	r := &replacer{observedComponent: pd.New(f.env), spare: spare}
	f.mgr = component.NewManager(r, f.env)
	f.deps.FakeKube.ClearActions()
	return f, r, rec
}

// seedPVC adds a Bound PVC of size in class sc (none when "") created a
// minute before the pods, to the fake API and the cache.
func seedPVC(t *testing.T, f *fixture, name, size, sc string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
	}
	if sc != "" {
		pvc.Spec.StorageClassName = &sc
	}
	if _, err := f.deps.KubeClient.CoreV1().PersistentVolumeClaims("ns").Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Update(pvc))
}

// annotateReplace marks the cached pod with the replace-volume annotation
// set to value; the pod was created a minute after its PVCs.
func annotateReplace(t *testing.T, f *fixture, name, value string) {
	t.Helper()
	pod, err := f.deps.PodLister.Pods("ns").Get(name)
	if err != nil {
		t.Fatal(err)
	}
	pod = pod.DeepCopy()
	pod.UID = types.UID("uid-" + name)
	pod.CreationTimestamp = metav1.NewTime(f.deps.FakeClock.Now().Add(60e9))
	pod.Annotations = map[string]string{label.AnnReplaceVolume: value}
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
	if _, err := f.deps.KubeClient.CoreV1().Pods("ns").Update(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// verbsOn lists "verb resource/name" of the writes, in order.
func verbsOn(f *fixture) []string {
	var out []string
	for _, a := range writes(f.deps) {
		name := ""
		switch a := a.(type) {
		case interface{ GetName() string }:
			name = a.GetName()
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource+"/"+name)
	}
	return out
}

func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// A request first adds the spare pod: the member is not asked to leave and
// nothing is deleted until the spare is there; the replacement shows in
// status and starts with an event.
func TestReplaceVolumeAddsTheSpareFirst(t *testing.T) {
	t.Parallel()
	f, r, rec := replaceFixture(t, 1)
	annotateReplace(t, f, "basic-pd-1", label.ReplaceVolumeTrue)
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	ctx, revisits := flow.WithRevisits(context.Background())
	if err := f.mgr.Sync(ctx, tc); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if len(r.calls) != 0 {
		t.Errorf("PrepareVolumeReplace called %v before the spare exists", r.calls)
	}
	sts, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-pd", metav1.GetOptions{})
	if err != nil || *sts.Spec.Replicas != 4 {
		t.Fatalf("StatefulSet replicas %v (%v), want 4 (3 + 1 spare)", sts.Spec.Replicas, err)
	}
	for _, w := range verbsOn(f) {
		if strings.HasPrefix(w, "delete") {
			t.Errorf("write %q before the spare exists", w)
		}
	}
	s := tc.Status.PD.ComponentStatus
	c := meta.FindStatusCondition(s.Conditions, component.ConditionVolumeReplacing)
	if !s.VolReplaceInProgress || c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "spare") {
		t.Errorf("status volReplaceInProgress=%v condition %+v, want True waiting for the spare", s.VolReplaceInProgress, c)
	}
	if re, ok := flow.AsRequeue(revisits.Err()); !ok || !strings.Contains(re.Reason, "basic-pd-1") {
		t.Errorf("revisit %v, want one naming basic-pd-1", revisits.Err())
	}
	if ev := strings.Join(drain(rec), "\n"); !strings.Contains(ev, "Normal ReplaceVolumeStarted") {
		t.Errorf("events %q, want ReplaceVolumeStarted", ev)
	}
}

// Without spares the member is asked to leave; while it has not left
// nothing is deleted; once it has, its PVC is deleted, then its pod, both
// under UID preconditions.
func TestReplaceVolumeDeletesDataOnlyAfterTheMemberLeft(t *testing.T) {
	t.Parallel()
	f, r, rec := replaceFixture(t, 0)
	annotateReplace(t, f, "basic-pd-2", label.ReplaceVolumeTrue)
	ctx, _ := flow.WithRevisits(context.Background())
	if err := f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if strings.Join(r.calls, ",") != "basic-pd-2" {
		t.Fatalf("PrepareVolumeReplace calls %v, want basic-pd-2", r.calls)
	}
	for _, w := range verbsOn(f) {
		if strings.HasPrefix(w, "delete") {
			t.Fatalf("%q while the member has not left", w)
		}
	}
	r.left = true
	f.deps.FakeKube.ClearActions()
	if err := f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatalf("sync: %v", err)
	}
	var deletes []string
	for _, w := range verbsOn(f) {
		if strings.HasPrefix(w, "delete") {
			deletes = append(deletes, w)
		}
	}
	want := "delete persistentvolumeclaims/pd-basic-pd-2,delete pods/basic-pd-2"
	if strings.Join(deletes, ",") != want {
		t.Errorf("deletes %v, want %s (PVC first, then the pod)", deletes, want)
	}
	if ev := strings.Join(drain(rec), "\n"); !strings.Contains(ev, "Normal ReplaceVolumePodDeleted") {
		t.Errorf("events %q, want ReplaceVolumePodDeleted", ev)
	}
}

// A PVC of additionalVolumes the pod mounts (shared by every pod) is not
// the member's: only the claim template's PVC and the pod are deleted.
func TestReplaceVolumeKeepsAdditionalVolumePVCs(t *testing.T) {
	t.Parallel()
	f, r, _ := replaceFixture(t, 0)
	r.left = true
	seedPVC(t, f, "shared-nfs", "1Gi", "")
	annotateReplace(t, f, "basic-pd-2", label.ReplaceVolumeTrue)
	pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-2")
	if err != nil {
		t.Fatal(err)
	}
	pod = pod.DeepCopy()
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "nfs", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared-nfs"}}})
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
	f.deps.FakeKube.ClearActions()
	ctx, _ := flow.WithRevisits(context.Background())
	if err := f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatalf("sync: %v", err)
	}
	var deletes []string
	for _, w := range verbsOn(f) {
		if strings.HasPrefix(w, "delete") {
			deletes = append(deletes, w)
		}
	}
	if want := "delete persistentvolumeclaims/pd-basic-pd-2,delete pods/basic-pd-2"; strings.Join(deletes, ",") != want {
		t.Errorf("deletes %v, want %s (never the shared PVC)", deletes, want)
	}
}

// An unknown value is ignored, and a converged component with no request
// makes no write at all.
func TestReplaceVolumeIgnoresOtherValuesAndWritesNothingConverged(t *testing.T) {
	t.Parallel()
	for _, value := range []string{"", "yes"} {
		t.Run("value="+value, func(t *testing.T) {
			t.Parallel()
			f, r, _ := replaceFixture(t, 1)
			if value != "" {
				annotateReplace(t, f, "basic-pd-0", value)
				f.deps.FakeKube.ClearActions()
			}
			tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
			if err := f.mgr.Sync(context.Background(), tc); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if w := verbsOn(f); len(w) != 0 || len(r.calls) != 0 {
				t.Errorf("writes %v, calls %v; want none", w, r.calls)
			}
			if tc.Status.PD.VolReplaceInProgress {
				t.Error("volReplaceInProgress set without a request")
			}
		})
	}
}

// With spec.enablePVCReplace a smaller size is not refused: a StatefulSet
// whose claim templates still ask for the old size is first deleted with
// its pods orphaned; once they match, the lowest member's pod is annotated
// with the replace-volume request.
func TestEnablePVCReplaceAsksForTheReplacementOfAShrink(t *testing.T) {
	t.Parallel()
	shrunk := func() *v1alpha1.TidbCluster {
		tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
		tc.Spec.PD.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
		tc.Spec.EnablePVCReplace = ptrTo(true)
		return tc
	}
	t.Run("templates drifted", func(t *testing.T) {
		t.Parallel()
		f, _, rec := replaceFixture(t, 1)
		err := f.mgr.Sync(context.Background(), shrunk())
		if re, waiting := flow.AsRequeue(err); !waiting || !strings.Contains(re.Reason, "created again") {
			t.Fatalf("sync = %v, want a wait for the StatefulSet to be created again", err)
		}
		if got := strings.Join(verbsOn(f), ","); !strings.Contains(got, "delete statefulsets/basic-pd") || strings.Contains(got, "pods") {
			t.Errorf("writes %q, want the StatefulSet deleted (pods orphaned) and no pod touched", got)
		}
		if ev := strings.Join(drain(rec), "\n"); !strings.Contains(ev, "StatefulSetRecreating") {
			t.Errorf("events %q, want StatefulSetRecreating", ev)
		}
	})
	t.Run("templates match", func(t *testing.T) {
		t.Parallel()
		f, _, rec := replaceFixture(t, 1)
		sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
		if err != nil {
			t.Fatal(err)
		}
		sts = sts.DeepCopy()
		sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("512Mi")
		mustAdd(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
		ctx, _ := flow.WithRevisits(context.Background())
		tc := shrunk()
		if err := f.mgr.Sync(ctx, tc); err != nil {
			t.Fatalf("sync: %v", err)
		}
		pod, err := f.deps.KubeClient.CoreV1().Pods("ns").Get(context.Background(), "basic-pd-0", metav1.GetOptions{})
		if err != nil || pod.Annotations[label.AnnReplaceVolume] != label.ReplaceVolumeTrue {
			t.Fatalf("basic-pd-0 annotations %v (%v), want the replace-volume request", pod.Annotations, err)
		}
		ev := strings.Join(drain(rec), "\n")
		if !strings.Contains(ev, "ReplaceVolumeRequested") || strings.Contains(ev, "VolumeResizeRefused") {
			t.Errorf("events %q, want ReplaceVolumeRequested and no VolumeResizeRefused", ev)
		}
		if c := meta.FindStatusCondition(tc.Status.PD.Conditions, component.ConditionVolumeResizing); c != nil {
			t.Errorf("condition %+v, want no resize condition for a shrink being replaced", c)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }
