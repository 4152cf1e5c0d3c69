package apply

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestRemovePodAnnotationsKeepsTheOthers removes two keys of a pod and
// keeps its third; a pod already gone is not an error.
func TestRemovePodAnnotationsKeepsTheOthers(t *testing.T) {
	t.Parallel()
	a, kube, _ := newFakeApplier()
	owner := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "u1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-0", Namespace: "ns",
		Annotations: map[string]string{"a": "1", "b": "2", "keep": "3"}}}
	if _, err := kube.CoreV1().Pods("ns").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.RemovePodAnnotations(context.Background(), owner, "basic-tikv-0", "a", "b"); err != nil {
		t.Fatal(err)
	}
	live, err := kube.CoreV1().Pods("ns").Get(context.Background(), "basic-tikv-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(live.Annotations) != 1 || live.Annotations["keep"] != "3" {
		t.Errorf("annotations %v, want only keep=3", live.Annotations)
	}
	if err := a.RemovePodAnnotations(context.Background(), owner, "gone", "a"); err != nil {
		t.Errorf("a missing pod: %v", err)
	}
}
