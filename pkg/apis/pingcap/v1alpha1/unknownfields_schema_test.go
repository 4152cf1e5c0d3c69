package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPassThroughSchemasChecked ties the CRDs to the decoder: every spec
// field the generated CRD leaves open (x-kubernetes-preserve-unknown-fields)
// is either a field of a Kubernetes type, which the decoder checks and
// TestUnknownFieldsInEveryPassThrough covers, or free-form by design (read
// by its own UnmarshalJSON: config, compactBackupTemplate).
func TestPassThroughSchemasChecked(t *testing.T) {
	t.Parallel()
	for _, kc := range kindCases {
		t.Run(kc.kind, func(t *testing.T) {
			t.Parallel()
			checked := map[string]bool{}
			for _, p := range passThroughFields(kc.spec, nil, map[reflect.Type]bool{}) {
				checked[p.schemaPath()] = true
			}
			root := specSchema(t, filepath.Join(crdDir, "pingcap.com_"+kc.plural+".yaml"))
			spec, _ := root["properties"].(map[string]any)["spec"].(map[string]any)
			open := openSchemaPaths(spec, "")
			if len(open) == 0 {
				t.Fatalf("no open field found in the spec schema of %s", kc.plural)
			}
			for _, p := range open {
				if checked[p] {
					continue
				}
				if typ, ok := goTypeAt(kc.spec, p); !ok || !opaque(typ) {
					t.Errorf("spec.%s is open in the CRD, but the decoder does not check it (Go type %v)", p, typ)
				}
			}
		})
	}
}

// TestV16PathsKnownToTheDecoder proves the strict reading never names a
// field of the v1.6 API as unknown: every v1.6 spec path exists in our Go
// types, or lies below a value read by its own UnmarshalJSON.
func TestV16PathsKnownToTheDecoder(t *testing.T) {
	t.Parallel()
	for _, kc := range kindCases {
		t.Run(kc.kind, func(t *testing.T) {
			t.Parallel()
			var unknown []string
			for _, p := range readPaths(t, filepath.Join(v16PathsDir, kc.plural+".txt")) {
				if p == "spec" {
					continue
				}
				if _, ok := goTypeAt(kc.spec, strings.TrimPrefix(p, "spec.")); !ok {
					unknown = append(unknown, p)
				}
			}
			if len(unknown) > 0 {
				t.Errorf("%d v1.6 paths would be named unknown:\n  %s", len(unknown), strings.Join(unknown, "\n  "))
			}
		})
	}
}

// openSchemaPaths lists the paths, below node, of the schemas that preserve
// unknown fields, in the notation of passThrough.schemaPath; it does not
// descend into them.
func openSchemaPaths(node map[string]any, path string) []string {
	var out []string
	props, _ := node["properties"].(map[string]any)
	for name, v := range props {
		child, _ := v.(map[string]any)
		p := name
		if path != "" {
			p = path + "." + name
		}
		for {
			if preservesUnknown(child) {
				out = append(out, p)
				break
			}
			if items, ok := child["items"].(map[string]any); ok {
				child, p = items, p+"[]"
				continue
			}
			if values, ok := child["additionalProperties"].(map[string]any); ok {
				child, p = values, p+"{}"
				continue
			}
			out = append(out, openSchemaPaths(child, p)...)
			break
		}
	}
	return out
}

// goTypeAt resolves a field path (v1.6 notation) in t by JSON names and
// returns the type it reaches; a path below an opaque type resolves to it.
func goTypeAt(t reflect.Type, path string) (reflect.Type, bool) {
	for _, seg := range strings.Split(path, ".") {
		t = deref(t)
		if opaque(t) {
			return t, true
		}
		name, suffix := seg, ""
		if i := strings.IndexAny(seg, "[{"); i >= 0 {
			name, suffix = seg[:i], seg[i:]
		}
		f, ok := fieldByJSONName(t, name)
		if !ok {
			return nil, false
		}
		for t = f; suffix != ""; suffix = suffix[2:] {
			t = deref(t)
			if opaque(t) {
				return t, true
			}
			switch {
			case strings.HasPrefix(suffix, "[]") && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
				t = t.Elem()
			case strings.HasPrefix(suffix, "{}") && t.Kind() == reflect.Map:
				t = t.Elem()
			default:
				return nil, false
			}
		}
	}
	return deref(t), true
}

// deref strips pointers.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldByJSONName finds the field a JSON key names in struct t, through
// embedded structs as encoding/json does.
func fieldByJSONName(t reflect.Type, name string) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || tag == "-":
		case f.Anonymous && tag == "":
			if ft, ok := fieldByJSONName(deref(f.Type), name); ok {
				return ft, true
			}
		case tag == name || (tag == "" && f.Name == name):
			return f.Type, true
		}
	}
	return nil, false
}

// TestGoTypeAt checks the resolver on known and unknown paths, so the tests
// above cannot pass by resolving everything.
func TestGoTypeAt(t *testing.T) {
	t.Parallel()
	spec := reflect.TypeFor[TidbClusterSpec]()
	cases := map[string]bool{
		"tikv.replicas": true,
		"tikv.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[].values[]": true,
		"tikv.affinity.nodeAfinity":                  false,
		"tikv.additionalContainers[].imagePullPolcy": false,
		"tikv.additionalContainers.name":             false,
		"tikv.config.anything.below":                 true,
		"tikv.storageVolumes[].name":                 true,
		"labels{}":                                   true,
		"tikv.replicas[]":                            false,
	}
	for path, want := range cases {
		if _, got := goTypeAt(spec, path); got != want {
			t.Errorf("goTypeAt(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestExamplesHaveNoUnknownFields reads every object of examples/ (the
// v1.6 YAML users start from) and checks that the decoder names nothing.
func TestExamplesHaveNoUnknownFields(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "examples", "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	objects := map[string]func() json.Unmarshaler{}
	for _, kc := range kindCases {
		objects[kc.kind] = kc.object
	}
	read := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(raw), "\n---") {
			data, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var head struct{ Kind string }
			if err := json.Unmarshal(data, &head); err != nil || objects[head.Kind] == nil {
				continue
			}
			obj := objects[head.Kind]()
			if err := json.Unmarshal(data, obj); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			read++
			if got := obj.(interface{ GetUnknownFields() []string }).GetUnknownFields(); len(got) > 0 {
				t.Errorf("%s: %s names unknown fields %q", file, head.Kind, got)
			}
		}
	}
	if read < 10 {
		t.Errorf("read %d objects of this API from %d files, want at least 10", read, len(files))
	}
}
