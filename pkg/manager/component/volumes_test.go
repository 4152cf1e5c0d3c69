package component_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
)

// volumeFixture is a converged 3-member PD whose PVCs are Bound at 1Gi in
// StorageClass sc.
type volumeFixture struct {
	*fixture
	tc *v1alpha1.TidbCluster
}

func newVolumeFixture(t *testing.T, sc string, expandable bool) *volumeFixture {
	t.Helper()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	_, err := f.deps.KubeClient.StorageV1().StorageClasses().Create(context.Background(), &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: sc}, Provisioner: "kwok.x-k8s.io/volume", AllowVolumeExpansion: &expandable},
		metav1.CreateOptions{})
	mustAdd(t, err)
	vf := &volumeFixture{fixture: f, tc: newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)}
	for _, name := range []string{"pd-basic-pd-0", "pd-basic-pd-1", "pd-basic-pd-2"} {
		vf.setPVC(t, name, sc, "1Gi", "1Gi")
	}
	for len(f.deps.FakeRecorder.Events) > 0 {
		<-f.deps.FakeRecorder.Events // the first sync's creations
	}
	return vf
}

// setPVC puts the PVC into the cache with its requested and actual size.
func (f *volumeFixture) setPVC(t *testing.T, name, sc, request, capacity string) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &sc, Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}},
	}
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().PersistentVolumeClaims().Informer().GetIndexer().Update(pvc))
	pvcs := f.deps.KubeClient.CoreV1().PersistentVolumeClaims("ns")
	if _, err := pvcs.Update(context.Background(), pvc, metav1.UpdateOptions{}); err != nil {
		_, err = pvcs.Create(context.Background(), pvc, metav1.CreateOptions{})
		mustAdd(t, err)
	}
}

// sync runs one sync wanting size for PD's data, and returns the patched
// PVCs, the events and the revisit asked for (nil: none).
func (f *volumeFixture) sync(t *testing.T, size string) (patched, events []string, revisit error) {
	t.Helper()
	f.tc.Spec.PD.Requests[corev1.ResourceStorage] = resource.MustParse(size)
	f.deps.FakeKube.ClearActions()
	ctx, r := flow.WithRevisits(context.Background())
	if err := f.mgr.Sync(ctx, f.tc); err != nil {
		t.Fatalf("sync: %v", err)
	}
	for _, a := range writes(f.deps) {
		if a.GetVerb() != "patch" || a.GetResource().Resource != "persistentvolumeclaims" {
			t.Fatalf("unexpected write %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		patched = append(patched, a.(interface{ GetName() string }).GetName())
	}
	for len(f.deps.FakeRecorder.Events) > 0 {
		events = append(events, <-f.deps.FakeRecorder.Events)
	}
	return patched, events, r.Err()
}

func (f *volumeFixture) condition() *metav1.Condition {
	return meta.FindStatusCondition(f.tc.Status.PD.Conditions, component.ConditionVolumeResizing)
}

func TestVolumesStatusOfAConvergedComponentWritesNothing(t *testing.T) {
	t.Parallel()
	f := newVolumeFixture(t, "fast", true)
	patched, _, revisit := f.sync(t, "1Gi")
	if len(patched) != 0 || revisit != nil || f.condition() != nil {
		t.Fatalf("patched %v, revisit %v, condition %+v; want nothing", patched, revisit, f.condition())
	}
	v := f.tc.Status.PD.Volumes["pd"]
	if v == nil {
		t.Fatalf("status.pd.volumes = %+v, want the pd volume", f.tc.Status.PD.Volumes)
	}
	one := resource.MustParse("1Gi")
	if v.BoundCount != 3 || v.CurrentCount != 3 || v.ModifiedCount != 3 || v.CurrentCapacity.Cmp(one) != 0 ||
		v.ModifiedCapacity.Cmp(one) != 0 || v.CurrentStorageClass != "fast" {
		t.Errorf("volume status %+v, want 3 Bound PVCs of 1Gi in fast, all at the wanted size", v)
	}
}

// TestVolumesGrowOneMemberAtATime raises PD's storage: the PVCs of one
// member are patched, the next only after the driver expanded them, and
// the end is announced once.
func TestVolumesGrowOneMemberAtATime(t *testing.T) {
	t.Parallel()
	f := newVolumeFixture(t, "fast", true)
	for i, name := range []string{"pd-basic-pd-0", "pd-basic-pd-1", "pd-basic-pd-2"} {
		patched, events, revisit := f.sync(t, "2Gi")
		if len(patched) != 1 || patched[0] != name {
			t.Fatalf("step %d: patched %v, want only %s", i, patched, name)
		}
		if _, ok := flow.AsRequeue(revisit); !ok || !strings.Contains(revisit.Error(), name) {
			t.Fatalf("step %d: revisit %v, want one naming %s", i, revisit, name)
		}
		if c := f.condition(); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, name) {
			t.Fatalf("step %d: condition %+v, want True naming %s", i, c, name)
		}
		if len(events) != 1 || !strings.HasPrefix(events[0], "Normal VolumeResizing") {
			t.Fatalf("step %d: events %v, want one VolumeResizing", i, events)
		}
		// Asked, not yet expanded: the next member waits.
		f.setPVC(t, name, "fast", "2Gi", "1Gi")
		if patched, _, revisit := f.sync(t, "2Gi"); len(patched) != 0 || revisit == nil {
			t.Fatalf("step %d: while %s expands: patched %v, revisit %v; want a wait", i, name, patched, revisit)
		}
		if v := f.tc.Status.PD.Volumes["pd"]; v.ModifiedCount != i {
			t.Errorf("step %d: modifiedCount %d, want %d", i, v.ModifiedCount, i)
		}
		f.setPVC(t, name, "fast", "2Gi", "2Gi")
	}
	patched, events, revisit := f.sync(t, "2Gi")
	if len(patched) != 0 || revisit != nil || f.condition() != nil {
		t.Fatalf("after the last expansion: patched %v, revisit %v, condition %+v", patched, revisit, f.condition())
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Normal VolumeResized") {
		t.Errorf("events %v, want one VolumeResized", events)
	}
	if v := f.tc.Status.PD.Volumes["pd"]; v.ModifiedCount != 3 || v.CurrentCount != 3 || v.CurrentCapacity.String() != "2Gi" {
		t.Errorf("volume status %+v, want all 3 at 2Gi", v)
	}
}

// TestVolumesWithoutStorageClassPermission: an operator that may not read
// StorageClasses (namespaced without clusterPermissions.storageclasses)
// grows no PVC, reads no StorageClass, and names the chart value.
func TestVolumesWithoutStorageClassPermission(t *testing.T) {
	t.Parallel()
	f := newVolumeFixture(t, "fast", true)
	f.env.StorageClassesDenied = true
	f.mgr = component.NewManager(pd.New(f.env), f.env)
	patched, events, _ := f.sync(t, "2Gi")
	if len(patched) != 0 {
		t.Fatalf("patched %v without permission to read the StorageClass", patched)
	}
	for _, a := range f.deps.FakeKube.Actions() {
		if a.GetResource().Resource == "storageclasses" {
			t.Errorf("read a StorageClass without permission: %v", a)
		}
	}
	if c := f.condition(); c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, component.StorageClassPermission) {
		t.Errorf("condition %+v, want False naming %s", c, component.StorageClassPermission)
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning VolumeResizeRefused") {
		t.Errorf("events %v, want one Warning", events)
	}
}

// TestVolumesRefuseWhatCannotBeDone: a StorageClass without expansion and
// a smaller size leave the PVCs alone, say why in a False condition, and
// warn once, not on every sync.
func TestVolumesRefuseWhatCannotBeDone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, size, want string }{
		{"no expansion", "2Gi", "StorageClass fixed does not allow volume expansion"},
		{"shrink", "512Mi", "cannot shrink from 1Gi to 512Mi"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newVolumeFixture(t, "fixed", false)
			patched, events, revisit := f.sync(t, tt.size)
			c := f.condition()
			if len(patched) != 0 || revisit != nil {
				t.Fatalf("patched %v, revisit %v; want no write and no wait", patched, revisit)
			}
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != component.ReasonVolumeResizeRefused || !strings.Contains(c.Message, tt.want) {
				t.Fatalf("condition %+v, want False %s saying %q", c, component.ReasonVolumeResizeRefused, tt.want)
			}
			if len(events) != 1 || !strings.HasPrefix(events[0], "Warning VolumeResizeRefused") {
				t.Fatalf("events %v, want one Warning", events)
			}
			if _, events, _ := f.sync(t, tt.size); len(events) != 0 {
				t.Errorf("second sync events %v, want none (the condition already says it)", events)
			}
		})
	}
}
