package precheck

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	roleRefKinds = []string{"Role", "ClusterRole"}
	subjectKinds = []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}
)

// checkRole checks a Role: a path-segment name, metadata, and rules with
// verbs, API groups and resources (a namespaced rule cannot name
// non-resource URLs).
func checkRole(r *rbacv1.Role, root *field.Path) field.ErrorList {
	errs := checkObjectMeta(&r.ObjectMeta, nameIsPathSegment, root.Child("metadata"))
	for i, rule := range r.Rules {
		rp := root.Child("rules").Index(i)
		if len(rule.Verbs) == 0 {
			errs = append(errs, field.Required(rp.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(rule.NonResourceURLs) > 0 {
			errs = append(errs, field.Invalid(rp.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			continue
		}
		if len(rule.APIGroups) == 0 {
			errs = append(errs, field.Required(rp.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(rule.Resources) == 0 {
			errs = append(errs, field.Required(rp.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// checkRoleBinding checks a RoleBinding: a path-segment name, metadata, a
// roleRef to a Role or ClusterRole of the RBAC group with a name, and
// subjects of a known kind with a name and the API group of their kind.
func checkRoleBinding(b *rbacv1.RoleBinding, root *field.Path) field.ErrorList {
	errs := checkObjectMeta(&b.ObjectMeta, nameIsPathSegment, root.Child("metadata"))
	rp := root.Child("roleRef")
	if b.RoleRef.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(rp.Child("apiGroup"), b.RoleRef.APIGroup, []string{rbacv1.GroupName}))
	}
	errs = append(errs, requiredOneOf(rp.Child("kind"), b.RoleRef.Kind, roleRefKinds...)...)
	if b.RoleRef.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	} else {
		errs = append(errs, invalidAll(rp.Child("name"), b.RoleRef.Name, nameIsPathSegment(b.RoleRef.Name))...)
	}
	for i := range b.Subjects {
		errs = append(errs, checkSubject(&b.Subjects[i], root.Child("subjects").Index(i))...)
	}
	return errs
}

func checkSubject(s *rbacv1.Subject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			errs = append(errs, invalidAll(p.Child("name"), s.Name, validation.ValidateServiceAccountName(s.Name, false))...)
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if s.Namespace != "" {
			errs = append(errs, invalidAll(p.Child("namespace"), s.Namespace, utilvalidation.IsDNS1123Label(s.Namespace))...)
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, subjectKinds))
	}
	return errs
}
