package workload

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestInvalidStandalone(t *testing.T) {
	t.Parallel()
	rr := func(list string, q string) corev1.ResourceRequirements {
		l := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(q)}
		if list == "limits" {
			return corev1.ResourceRequirements{Limits: l}
		}
		return corev1.ResourceRequirements{Requests: l}
	}
	for _, tc := range []struct {
		name  string
		names []string
		res   corev1.ResourceRequirements
		want  string
	}{
		{"valid", []string{"basic-tidb-dashboard"}, rr("requests", "1Gi"), ""},
		{"zero is allowed", []string{"basic"}, rr("limits", "0"), ""},
		{"StatefulSet name too long", []string{strings.Repeat("a", 40) + "-tidb-dashboard"}, corev1.ResourceRequirements{}, "metadata.name"},
		{"Service name too long", []string{"a", strings.Repeat("a", 60) + "-exposed"}, corev1.ResourceRequirements{}, "metadata.name"},
		{"negative limit", []string{"basic"}, rr("limits", "-1Gi"), "spec.limits.memory"},
		{"negative request", []string{"basic"}, rr("requests", "-5Mi"), "spec.requests.memory"},
	} {
		got := InvalidStandalone(tc.names[0], tc.names[1:], tc.res, "spec")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q, want a message naming %q", tc.name, got, tc.want)
		}
	}
}
