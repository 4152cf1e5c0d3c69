package precheck

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldsOf renders each error as "path: type", which is what the rule
// tests assert (messages are the helpers' business).
func fieldsOf(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: %s", e.Field, e.Type))
	}
	return out
}

func cmpDiff(want, got any) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

// ruleCase is one bad object and the errors it must produce, exactly.
type ruleCase struct {
	name string
	obj  metav1.Object
	want []string
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := fieldsOf(Object(tc.obj))
			if diff := cmpDiff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

const (
	stsP = "StatefulSet[basic-tikv]"
	podP = stsP + ".spec.template.spec"
	ctrP = podP + ".containers[0]"
	svcP = "Service[basic-tidb]"
)

// sts returns a valid StatefulSet changed by mut.
func sts(mut func(*appsv1.StatefulSet)) metav1.Object {
	s := validStatefulSet()
	mut(s)
	return s
}

// pod returns a valid StatefulSet whose pod spec is changed by mut.
func pod(mut func(*corev1.PodSpec)) metav1.Object {
	return sts(func(s *appsv1.StatefulSet) { mut(&s.Spec.Template.Spec) })
}

// ctr returns a valid StatefulSet whose first container is changed by mut.
func ctr(mut func(*corev1.Container)) metav1.Object {
	return pod(func(p *corev1.PodSpec) { mut(&p.Containers[0]) })
}

// svc returns the two-port ClusterIP Service changed by mut.
func svc(mut func(*corev1.Service)) metav1.Object {
	s := clusterIPService()
	mut(s)
	return s
}
