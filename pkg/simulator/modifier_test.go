package simulator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
)

// TestModifierPlaysTheThreeOutcomes: a PVC asking for an existing class gets
// it as current, one asking for a missing class stays Pending, one asking
// for a class the driver refuses is Infeasible.
func TestModifierPlaysTheThreeOutcomes(t *testing.T) {
	ctx := context.Background()
	withClass := func(name, class string) *corev1.PersistentVolumeClaim {
		c := pvc(name, "grow", "pv-"+name, "1Gi", "1Gi")
		c.Spec.VolumeAttributesClassName = &class
		return c
	}
	kube := fake.NewClientset(
		&storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, DriverName: "kwok"},
		&storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "impossible",
			Annotations: map[string]string{AnnInfeasibleClass: "true"}}, DriverName: "kwok"},
		withClass("a", "fast"), withClass("b", "missing"), withClass("c", "impossible"))
	factory := informers.NewSharedInformerFactory(kube, 0)
	inf := factory.Core().V1().PersistentVolumeClaims().Informer()
	r := newResizer(kube, inf, klog.Background())
	for _, name := range []string{"a", "b", "c"} {
		obj, err := kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
		if err := r.modify(ctx, types.NamespacedName{Namespace: "ns", Name: name}); err != nil {
			t.Fatalf("modify %s: %v", name, err)
		}
	}
	get := func(name string) corev1.PersistentVolumeClaimStatus {
		c, err := kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Status
	}
	if s := get("a"); s.CurrentVolumeAttributesClassName == nil || *s.CurrentVolumeAttributesClassName != "fast" || s.ModifyVolumeStatus != nil {
		t.Errorf("existing class: status %+v, want current fast and no modification in flight", s)
	}
	if s := get("b"); s.CurrentVolumeAttributesClassName != nil || s.ModifyVolumeStatus == nil ||
		s.ModifyVolumeStatus.Status != corev1.PersistentVolumeClaimModifyVolumePending {
		t.Errorf("missing class: status %+v, want Pending", s)
	}
	if s := get("c"); s.ModifyVolumeStatus == nil || s.ModifyVolumeStatus.Status != corev1.PersistentVolumeClaimModifyVolumeInfeasible {
		t.Errorf("refused class: status %+v, want Infeasible", s)
	}
}
