package defaulting

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestStandaloneAccessorPrecedence: own scalars win, maps merge with own
// winning, component-only lists fall back to the inherited level, and the
// image is baseImage:version with the inherited version as fallback.
func TestStandaloneAccessorPrecedence(t *testing.T) {
	t.Parallel()
	v1, sched := "v1.0.0", "inherited-scheduler"
	inherited := &v1alpha1.ComponentSpec{
		Version: &v1, SchedulerName: &sched,
		NodeSelector: map[string]string{"zone": "a", "disk": "hdd"},
		Env:          []corev1.EnvVar{{Name: "FROM_TOP", Value: "1"}},
		Tolerations:  []corev1.Toleration{{Key: "top"}},
	}
	own := &v1alpha1.ComponentSpec{
		NodeSelector: map[string]string{"disk": "ssd"},
		Tolerations:  []corev1.Toleration{{Key: "own"}},
	}
	a := NewStandaloneAccessor("ng-monitoring", inherited, own, "pingcap/ng-monitoring")
	if got := a.Image(); got != "pingcap/ng-monitoring:v1.0.0" {
		t.Errorf("Image = %q", got)
	}
	if got := a.SchedulerName(); got != sched {
		t.Errorf("SchedulerName = %q", got)
	}
	if got := a.NodeSelector(); got["zone"] != "a" || got["disk"] != "ssd" {
		t.Errorf("NodeSelector = %v", got)
	}
	if got := a.Env(); len(got) != 1 || got[0].Name != "FROM_TOP" {
		t.Errorf("Env = %v", got)
	}
	if got := a.Tolerations(); len(got) != 1 || got[0].Key != "own" {
		t.Errorf("Tolerations = %v", got)
	}
	if own.Env != nil {
		t.Error("the accessor changed own")
	}
	if got := NewStandaloneAccessor("tidb-dashboard", nil, nil, "pingcap/tidb-dashboard").Image(); got != "pingcap/tidb-dashboard" {
		t.Errorf("Image without version = %q", got)
	}
}
