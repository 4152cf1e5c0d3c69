package precheck

import (
	"encoding/json"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hugeExponent matches a number with an exponent of five or more digits.
var hugeExponent = regexp.MustCompile(`[0-9.][eE][+-]?[0-9]{5,}`)

// fuzzKinds makes an empty object of each kind Object dispatches on; the
// fuzzer picks one by index and decodes its mutated JSON into it.
var fuzzKinds = []func() metav1.Object{
	func() metav1.Object { return &appsv1.StatefulSet{} },
	func() metav1.Object { return &corev1.Service{} },
	func() metav1.Object { return &appsv1.Deployment{} },
	func() metav1.Object { return &corev1.ConfigMap{} },
	func() metav1.Object { return &corev1.ServiceAccount{} },
	func() metav1.Object { return &rbacv1.Role{} },
	func() metav1.Object { return &rbacv1.RoleBinding{} },
	func() metav1.Object { return &corev1.Pod{} },
	func() metav1.Object { return &corev1.Secret{} },
}

// FuzzObject decodes mutated JSON of valid objects into each supported
// type and asserts that Object never panics and reports the same errors
// twice in a row (it is deterministic and does not modify its argument).
func FuzzObject(f *testing.F) {
	seeds := []metav1.Object{validStatefulSet(), clusterIPService(), validDeployment(), validConfigMap(),
		validServiceAccount(), validRole(), validRoleBinding(), validPod(), headlessService(), loadBalancerService()}
	for _, s := range seeds {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		for i := range fuzzKinds {
			f.Add(uint8(i), b)
		}
	}
	f.Add(uint8(0), []byte(`{"spec":{"template":{"spec":{"containers":[{}],"volumes":[{}]}},"volumeClaimTemplates":[{}],"selector":{}}}`))
	f.Add(uint8(1), []byte(`{"spec":{"type":"LoadBalancer","clusterIP":"None","ports":[{"targetPort":"x"},{}]}}`))
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		if hugeExponent.Match(data) {
			// resource.ParseQuantity itself takes minutes on "1e-99999999";
			// that is apimachinery's decoder, not this package.
			return
		}
		obj := fuzzKinds[int(kind)%len(fuzzKinds)]()
		if err := json.Unmarshal(data, obj); err != nil {
			return
		}
		first := fieldsOf(Object(obj))
		if diff := cmpDiff(first, fieldsOf(Object(obj))); diff != "" {
			t.Fatalf("second run differs:\n%s", diff)
		}
	})
}
