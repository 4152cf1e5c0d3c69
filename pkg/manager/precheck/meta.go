package precheck

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxStatefulSetNameLength keeps "<name>-<controller-revision hash>" (a hash
// of up to 10 characters and a dash) within the 63 characters of a label
// value, which the StatefulSet controller writes on every pod.
const maxStatefulSetNameLength = 52

// nameFunc returns why a name is invalid for a kind; empty when valid.
type nameFunc func(name string) []string

func nameIsSubdomain(name string) []string { return utilvalidation.IsDNS1123Subdomain(name) }

func nameIsDNS1035Label(name string) []string { return utilvalidation.IsDNS1035Label(name) }

// nameIsPathSegment is the RBAC rule: anything but "." and "..", and no
// "/" or "%" (the name is a segment of the object's URL path).
func nameIsPathSegment(name string) []string {
	var msgs []string
	if name == "." || name == ".." {
		msgs = append(msgs, fmt.Sprintf("may not be '%s'", name))
	}
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", bad))
		}
	}
	return msgs
}

// nameIsStatefulSet requires a DNS-1123 label (pods take "<name>-<ordinal>"
// as hostname, which must be a label) of at most 52 characters.
func nameIsStatefulSet(name string) []string {
	msgs := utilvalidation.IsDNS1123Label(name)
	if len(name) > maxStatefulSetNameLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters, because the pods' controller-revision-hash label \"<name>-<hash>\" must fit in 63", maxStatefulSetNameLength))
	}
	return msgs
}

// checkObjectMeta checks a top-level object's metadata: the name (required,
// valid per nameFn), the namespace when set, labels, annotations, owner
// references and finalizers. The namespace may be empty because the API
// server takes it from the request.
func checkObjectMeta(m *metav1.ObjectMeta, nameFn nameFunc, p *field.Path) field.ErrorList {
	if m == nil {
		return field.ErrorList{field.Required(p.Child("name"), "")}
	}
	return checkMetaAccessor(m, nameFn, p)
}

func checkMetaAccessor(m metav1.Object, nameFn nameFunc, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.GetName() == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, invalidAll(p.Child("name"), m.GetName(), nameFn(m.GetName()))...)
	}
	if ns := m.GetNamespace(); ns != "" {
		errs = append(errs, invalidAll(p.Child("namespace"), ns, utilvalidation.IsDNS1123Label(ns))...)
	}
	errs = append(errs, checkLabels(m.GetLabels(), p.Child("labels"))...)
	errs = append(errs, checkAnnotations(m.GetAnnotations(), p.Child("annotations"))...)
	errs = append(errs, validation.ValidateOwnerReferences(m.GetOwnerReferences(), p.Child("ownerReferences"))...)
	return append(errs, validation.ValidateFinalizers(m.GetFinalizers(), p.Child("finalizers"))...)
}

// checkTemplateMeta checks the metadata of an embedded template (a pod or a
// volume claim template): only labels and annotations matter there.
func checkTemplateMeta(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := checkLabels(m.Labels, p.Child("labels"))
	return append(errs, checkAnnotations(m.Annotations, p.Child("annotations"))...)
}

// checkLabels checks each key is a qualified name and each value a label
// value, in key order, with the key in the error path.
func checkLabels(labels map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		kp := p.Key(k)
		errs = append(errs, metavalidation.ValidateLabelName(k, kp)...)
		errs = append(errs, invalidAll(kp, labels[k], utilvalidation.IsValidLabelValue(labels[k]))...)
	}
	return errs
}

// checkAnnotations checks each key is a qualified name (case-insensitive)
// and that keys and values together stay within 256 KiB.
func checkAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(annotations) {
		errs = append(errs, invalidAll(p.Key(k), k, utilvalidation.IsQualifiedName(strings.ToLower(k)))...)
	}
	if validation.ValidateAnnotationsSize(annotations) != nil {
		errs = append(errs, field.TooLong(p, "", validation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// checkLabelSelector checks a label selector: matchLabels as labels, and
// each matchExpression's operator, key and values. A nil selector is valid.
func checkLabelSelector(s *metav1.LabelSelector, p *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	errs := checkLabels(s.MatchLabels, p.Child("matchLabels"))
	for i, e := range s.MatchExpressions {
		errs = append(errs, metavalidation.ValidateLabelSelectorRequirement(e, metavalidation.LabelSelectorValidationOptions{}, p.Child("matchExpressions").Index(i))...)
	}
	return errs
}

// invalidAll turns the messages of an apimachinery Is* helper into Invalid
// errors at p.
func invalidAll(p *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(p, value, m))
	}
	return errs
}

// oneOf returns a NotSupported error when v is set and not in allowed. The
// empty value is always accepted because the API server defaults it.
func oneOf[T ~string](p *field.Path, v T, allowed ...T) field.ErrorList {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, allowed)}
}

// requiredOneOf is oneOf for fields the API server does not default.
func requiredOneOf[T ~string](p *field.Path, v T, allowed ...T) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return oneOf(p, v, allowed...)
}

// nonNegative rejects a negative value of an optional integer field.
func nonNegative[T ~int32 | ~int64](p *field.Path, v *T) field.ErrorList {
	if v == nil || *v >= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, *v, validation.IsNegativeErrorMsg)}
}

// dnsLabel checks a required DNS-1123 label.
func dnsLabel(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalidAll(p, v, utilvalidation.IsDNS1123Label(v))
}

// optionalSubdomain checks a DNS-1123 subdomain when v is set.
func optionalSubdomain(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return nil
	}
	return invalidAll(p, v, utilvalidation.IsDNS1123Subdomain(v))
}

// qualifiedName checks a required qualified name (label key syntax).
func qualifiedName(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalidAll(p, v, utilvalidation.IsQualifiedName(v))
}

// ipAddress checks an IP address with the lenient (legacy) parser, which
// every supported API server accepts; a stricter server may still refuse a
// non-canonical form such as "010.0.0.1".
func ipAddress(p *field.Path, v string) field.ErrorList {
	return utilvalidation.IsValidIPForLegacyField(p, v, false, nil)
}

// cidr checks a CIDR with the lenient (legacy) parser; see ipAddress.
func cidr(p *field.Path, v string) field.ErrorList {
	return utilvalidation.IsValidCIDRForLegacyField(p, v, false, nil)
}

// portNumber checks a required port number 1–65535.
func portNumber(p *field.Path, v int32) field.ErrorList {
	if v == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	return invalidAll(p, v, utilvalidation.IsValidPortNum(int(v)))
}

// relativePath checks a path that must stay below its base directory: not
// absolute and without a ".." element. When noDotDotPrefix is set it also
// may not start with "..", which projected volumes reserve.
func relativePath(p *field.Path, v string, noDotDotPrefix bool) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(v, "/") {
		errs = append(errs, field.Invalid(p, v, "must be a relative path"))
	}
	if slices.Contains(strings.Split(v, "/"), "..") {
		errs = append(errs, field.Invalid(p, v, "must not contain '..'"))
	} else if noDotDotPrefix && strings.HasPrefix(v, "..") {
		errs = append(errs, field.Invalid(p, v, "must not start with '..'"))
	}
	return errs
}

// sortedKeys returns the keys of m in order, so errors come out in a
// deterministic order (a repeated event then reads the same).
func sortedKeys[K ~string, V any](m map[K]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	return keys
}
