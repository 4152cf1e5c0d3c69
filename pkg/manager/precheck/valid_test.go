package precheck

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestTypicalObjectsPass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		obj  metav1.Object
	}{
		{"statefulset", validStatefulSet()},
		{"headless service", headlessService()},
		{"clusterIP service with two named ports", clusterIPService()},
		{"load balancer service", loadBalancerService()},
		{"deployment", validDeployment()},
		{"configmap", validConfigMap()},
		{"service account", validServiceAccount()},
		{"role", validRole()},
		{"role binding", validRoleBinding()},
		{"pod", validPod()},
		{"unknown kind", &corev1.Secret{ObjectMeta: objectMeta("basic-secret")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if errs := Object(tc.obj); len(errs) > 0 {
				t.Errorf("want no errors, got:\n%v", errs.ToAggregate())
			}
		})
	}
}

func TestObjectsAggregatesInOrder(t *testing.T) {
	t.Parallel()
	bad := headlessService()
	bad.Labels["bad key!"] = "x"
	sts := validStatefulSet()
	sts.Spec.Template.Spec.Tolerations[1].Value = "oops"
	errs := Objects([]metav1.Object{validConfigMap(), bad, nil, sts})
	got := fieldsOf(errs)
	want := []string{
		"Service[basic-tikv-peer].metadata.labels[bad key!]: Invalid value",
		"StatefulSet[basic-tikv].spec.template.spec.tolerations[1].value: Invalid value",
	}
	if diff := cmpDiff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	msg := errs.ToAggregate().Error()
	if !strings.Contains(msg, `StatefulSet[basic-tikv].spec.template.spec.tolerations[1].value: Invalid value: "oops": value must be empty when `+"`operator` is 'Exists'") {
		t.Errorf("aggregate does not name the object and field: %s", msg)
	}
}

// TestNilAndEmptyObjects: nil and zero objects of every kind never panic;
// nil ones have no errors.
func TestNilAndEmptyObjects(t *testing.T) {
	t.Parallel()
	for _, obj := range []metav1.Object{
		nil, (*corev1.Service)(nil), (*appsv1.StatefulSet)(nil), (*appsv1.Deployment)(nil), (*corev1.ConfigMap)(nil),
		(*corev1.ServiceAccount)(nil), (*rbacv1.Role)(nil), (*rbacv1.RoleBinding)(nil), (*corev1.Pod)(nil), (*corev1.Secret)(nil),
	} {
		if errs := Object(obj); len(errs) != 0 {
			t.Errorf("%T: want no errors, got %v", obj, errs)
		}
	}
	for _, obj := range []metav1.Object{
		&corev1.Service{}, &appsv1.StatefulSet{}, &appsv1.Deployment{}, &corev1.ConfigMap{}, &corev1.ServiceAccount{},
		&rbacv1.Role{}, &rbacv1.RoleBinding{}, &corev1.Pod{}, &corev1.Secret{}, &metav1.ObjectMeta{},
	} {
		if errs := Object(obj); len(errs) == 0 {
			t.Errorf("%T: an empty object has no name, want errors", obj)
		}
	}
}

// TestObjectDoesNotModify: the check is read-only.
func TestObjectDoesNotModify(t *testing.T) {
	t.Parallel()
	for _, obj := range []runtime.Object{validStatefulSet(), loadBalancerService(), validDeployment(), validRoleBinding()} {
		before := obj.DeepCopyObject()
		Object(obj.(metav1.Object))
		if diff := cmpDiff(before, obj); diff != "" {
			t.Errorf("%T modified:\n%s", obj, diff)
		}
	}
}
