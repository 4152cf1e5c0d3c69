package precheck

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Object checks obj with the API server's create-time rules for its concrete
// type and returns every problem found; an empty list means obj may be
// written. Supported types are *corev1.Service, *corev1.ConfigMap,
// *corev1.ServiceAccount, *corev1.Pod, *appsv1.StatefulSet,
// *appsv1.Deployment, *rbacv1.Role and *rbacv1.RoleBinding; any other type
// gets its metadata checked only (name a DNS-1123 subdomain, labels,
// annotations).
//
// Each error's field path starts with the kind and the name of the object,
// then follows the object's JSON path, e.g.
// "StatefulSet[basic-tikv].spec.template.spec.tolerations[0].value", so the
// aggregate (errs.ToAggregate()) tells a user which object and which field
// to fix. A nil obj, or a typed nil pointer, has no errors. Object reads
// nothing but obj, never panics and never modifies obj.
func Object(obj metav1.Object) field.ErrorList {
	if isNil(obj) {
		return nil
	}
	switch o := obj.(type) {
	case *corev1.Service:
		return checkService(o, rootPath("Service", o.Name))
	case *corev1.ConfigMap:
		return checkConfigMap(o, rootPath("ConfigMap", o.Name))
	case *corev1.ServiceAccount:
		return checkObjectMeta(&o.ObjectMeta, nameIsSubdomain, rootPath("ServiceAccount", o.Name).Child("metadata"))
	case *corev1.Pod:
		return checkPod(o, rootPath("Pod", o.Name))
	case *appsv1.StatefulSet:
		return checkStatefulSet(o, rootPath("StatefulSet", o.Name))
	case *appsv1.Deployment:
		return checkDeployment(o, rootPath("Deployment", o.Name))
	case *rbacv1.Role:
		return checkRole(o, rootPath("Role", o.Name))
	case *rbacv1.RoleBinding:
		return checkRoleBinding(o, rootPath("RoleBinding", o.Name))
	default:
		return checkMetaAccessor(obj, nameIsSubdomain, rootPath(typeName(obj), obj.GetName()).Child("metadata"))
	}
}

// Objects checks every object of objs with Object and returns all problems,
// in the order of objs; an empty list means the whole set may be written.
// Like Object it reads nothing but its argument and never panics; nil
// entries are skipped.
func Objects(objs []metav1.Object) field.ErrorList {
	var errs field.ErrorList
	for _, o := range objs {
		errs = append(errs, Object(o)...)
	}
	return errs
}

// rootPath names an object in error paths as Kind[name].
func rootPath(kind, name string) *field.Path {
	return field.NewPath(kind).Key(name)
}

// isNil reports whether obj is nil or a typed nil pointer, which a type
// switch alone would let through.
func isNil(obj metav1.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// typeName is the Go type name of obj (without package or pointer), used as
// the kind of objects Object does not know.
func typeName(obj metav1.Object) string {
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "Object"
	}
	return t.Name()
}

// countSet counts the non-nil pointer, slice and map fields of the struct
// v points to; it backs the "exactly one source" rules of unions such as
// VolumeSource and EnvVarSource, so new members of a union are counted
// without a change here. A nil v counts zero.
func countSet(v any) int {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return 0
	}
	rv = rv.Elem()
	if rv.Kind() != reflect.Struct {
		return 0
	}
	n := 0
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			if !f.IsNil() {
				n++
			}
		default:
		}
	}
	return n
}
