package component_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestCheckObjectsFindsWhatTheAPIServerWouldRefuse builds PD's objects
// from specs the schema leaves open and checks that each is refused before
// any write, with the object and field named.
func TestCheckObjectsFindsWhatTheAPIServerWouldRefuse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*v1alpha1.TidbCluster)
		want   string
	}{
		{"toleration Exists with a value", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"}}
		}, "StatefulSet[basic-pd].spec.template.spec.tolerations[0]"},
		{"illegal label key", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD.Labels = map[string]string{"bad key!": "x"}
		}, "bad key!"},
		{"nameless additional container", func(tc *v1alpha1.TidbCluster) {
			tc.Spec.PD.AdditionalContainers = []corev1.Container{{Image: "busybox"}}
		}, "StatefulSet[basic-pd].spec.template.spec.containers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
			if errs := f.mgr.CheckObjects(tc); len(errs) != 0 {
				t.Fatalf("a valid cluster's objects must pass: %v", errs)
			}
			c.mutate(tc)
			errs := f.mgr.CheckObjects(tc)
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), c.want) {
				t.Fatalf("errors %v, want one naming %s", errs, c.want)
			}
		})
	}
}
