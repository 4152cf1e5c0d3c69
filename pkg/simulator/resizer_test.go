package simulator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
)

// TestResizerExpandsOnlyWhatItsStorageClassAllows grows a Bound PVC in an
// expandable class (PV first, then the PVC's capacity) and leaves one in a
// fixed class alone.
func TestResizerExpandsOnlyWhatItsStorageClassAllows(t *testing.T) {
	ctx := context.Background()
	yes, no := true, false
	kube := fake.NewClientset(
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "grow"}, AllowVolumeExpansion: &yes},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fixed"}, AllowVolumeExpansion: &no},
		pv("pv-a", "1Gi"), pv("pv-b", "1Gi"),
		pvc("a", "grow", "pv-a", "2Gi", "1Gi"), pvc("b", "fixed", "pv-b", "2Gi", "1Gi"))
	factory := informers.NewSharedInformerFactory(kube, 0)
	inf := factory.Core().V1().PersistentVolumeClaims().Informer()
	r := newResizer(kube, inf, klog.Background())
	for _, name := range []string{"a", "b"} {
		obj, err := kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.GetIndexer().Add(obj); err != nil {
			t.Fatal(err)
		}
		if err := r.expand(ctx, types.NamespacedName{Namespace: "ns", Name: name}); err != nil {
			t.Fatalf("expand %s: %v", name, err)
		}
	}
	for _, tt := range []struct{ pvc, pv, want string }{{"a", "pv-a", "2Gi"}, {"b", "pv-b", "1Gi"}} {
		c, _ := kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, tt.pvc, metav1.GetOptions{})
		v, _ := kube.CoreV1().PersistentVolumes().Get(ctx, tt.pv, metav1.GetOptions{})
		got, gotPV := c.Status.Capacity[corev1.ResourceStorage], v.Spec.Capacity[corev1.ResourceStorage]
		if got.String() != tt.want || gotPV.String() != tt.want {
			t.Errorf("PVC %s capacity %s, PV %s, want both %s", tt.pvc, got.String(), gotPV.String(), tt.want)
		}
	}
}

func pv(name, size string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}
}

func pvc(name, sc, volume, request, capacity string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &sc, VolumeName: volume,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}}}
}
