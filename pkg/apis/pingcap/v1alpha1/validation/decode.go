package validation

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// validateDecoded reports a spec the API server stored but that could not
// be read into the Go types (see v1alpha1.DecodeError). Such an object has a
// zero spec in memory, so nothing else of it is worth checking.
func validateDecoded(decodeErr *v1alpha1.DecodeError) field.ErrorList {
	if decodeErr == nil {
		return nil
	}
	return field.ErrorList{field.Invalid(fieldPath(decodeErr.Field), "<unreadable>", decodeErr.Message)}
}

// fieldPath turns a dotted JSON path such as spec.tikv.env into a field.Path.
func fieldPath(dotted string) *field.Path {
	var p *field.Path
	for _, name := range strings.Split(dotted, ".") {
		switch {
		case name == "":
		case p == nil:
			p = field.NewPath(name)
		default:
			p = p.Child(name)
		}
	}
	if p == nil {
		return field.NewPath("spec")
	}
	return p
}

var configType = reflect.TypeFor[v1alpha1.Config]()

// validateConfigs finds every *v1alpha1.Config under spec (component
// configs, TiFlash's proxy config, PD micro-services …) by walking the
// struct, so a component added later is covered without a new line here,
// and reports each one that could not be read as a map or TOML document.
func validateConfigs(spec any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	walkConfigs(reflect.ValueOf(spec), path, &errs)
	return errs
}

func walkConfigs(v reflect.Value, path *field.Path, errs *field.ErrorList) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkConfigs(v.Elem(), path, errs)
		}
	case reflect.Struct:
		if v.Type() == configType {
			if c := v.Addr().Interface().(*v1alpha1.Config); c.IsInvalid() {
				*errs = append(*errs, field.Invalid(path, string(c.Invalid), c.InvalidReason))
			}
			return
		}
		walkStructConfigs(v, path, errs)
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkConfigs(v.Index(i), path.Index(i), errs)
		}
	}
}

// walkStructConfigs descends into the exported fields of a struct, named by
// their JSON names; embedded structs add no path segment.
func walkStructConfigs(v reflect.Value, path *field.Path, errs *field.ErrorList) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || !mayHoldConfig(f.Type) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous:
			walkConfigs(v.Field(i), path, errs)
		case name != "" && name != "-":
			walkConfigs(v.Field(i), path.Child(name), errs)
		}
	}
}

// mayHoldConfig prunes the walk: only types of this API can hold a Config
// (Kubernetes types such as Affinity or Container never do).
func mayHoldConfig(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t.PkgPath() == configType.PkgPath()
}
