package tidbcluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/label"
)

func TestMaintenanceChangedEnqueuesOnlyTheOperatorsAnnotatedPods(t *testing.T) {
	t.Parallel()
	pod := func(labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-tikv-0", Namespace: "ns", Labels: labels, Annotations: annotations}}
	}
	ours := map[string]string{label.ManagedByLabelKey: label.TiDBOperator, label.InstanceLabelKey: "basic"}
	evict := map[string]string{"tidb.pingcap.com/evict-leader": "none"}
	other := map[string]string{"x": "y"}
	for _, tt := range []struct {
		name     string
		old, new any
		want     bool
	}{
		{"annotation set", pod(ours, nil), pod(ours, evict), true},
		{"annotation removed", pod(ours, evict), pod(ours, other), true},
		{"value changed", pod(ours, evict), pod(ours, map[string]string{"tidb.pingcap.com/evict-leader": "delete-pod"}), true},
		{"new pod carrying one", nil, pod(ours, evict), true},
		{"unrelated annotation", pod(ours, nil), pod(ours, other), false},
		{"unchanged", pod(ours, evict), pod(ours, evict), false},
		{"not the operator's pod", pod(map[string]string{label.InstanceLabelKey: "basic"}, nil), pod(map[string]string{label.InstanceLabelKey: "basic"}, evict), false},
		{"not a pod", nil, "x", false},
	} {
		key, ok := maintenanceChanged(tt.old, tt.new)
		if ok != tt.want || (ok && key != "ns/basic") {
			t.Errorf("%s: maintenanceChanged = %q, %v; want %v", tt.name, key, ok, tt.want)
		}
	}
}
