package v1alpha1

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// typo is the misspelt key the tests put inside every pass-through field.
const typo = "zzMisspelt"

// kindCase is one kind of this API: its spec type, a fresh object to decode
// into, and its CRD's plural.
type kindCase struct {
	kind, plural string
	spec         reflect.Type
	object       func() json.Unmarshaler
	minFields    int // pass-through fields the spec has at least, so a broken walk fails
}

var kindCases = []kindCase{
	{"TidbCluster", "tidbclusters", reflect.TypeFor[TidbClusterSpec](), func() json.Unmarshaler { return &TidbCluster{} }, 100},
	{"Backup", "backups", reflect.TypeFor[BackupSpec](), func() json.Unmarshaler { return &Backup{} }, 6},
	{"Restore", "restores", reflect.TypeFor[RestoreSpec](), func() json.Unmarshaler { return &Restore{} }, 6},
	{"CompactBackup", "compactbackups", reflect.TypeFor[CompactSpec](), func() json.Unmarshaler { return &CompactBackup{} }, 5},
	{"BackupSchedule", "backupschedules", reflect.TypeFor[BackupScheduleSpec](), func() json.Unmarshaler { return &BackupSchedule{} }, 12},
	{"TidbInitializer", "tidbinitializers", reflect.TypeFor[TidbInitializerSpec](), func() json.Unmarshaler { return &TidbInitializer{} }, 1},
	{"TidbMonitor", "tidbmonitors", reflect.TypeFor[TidbMonitorSpec](), func() json.Unmarshaler { return &TidbMonitor{} }, 8},
	{"TidbDashboard", "tidbdashboards", reflect.TypeFor[TidbDashboardSpec](), func() json.Unmarshaler { return &TidbDashboard{} }, 8},
	{"TidbNGMonitoring", "tidbngmonitorings", reflect.TypeFor[TidbNGMonitoringSpec](), func() json.Unmarshaler { return &TidbNGMonitoring{} }, 8},
	{"DMCluster", "dmclusters", reflect.TypeFor[DMClusterSpec](), func() json.Unmarshaler { return &DMCluster{} }, 8},
}

// step is one key on the way from spec to a pass-through field; list and
// mapped say the value under the key is a list or a map of what follows.
type step struct {
	key          string
	list, mapped bool
}

// passThrough is a field of a Kubernetes type (k8s.io/api) reached from a
// spec through our own types: the CRD leaves it open, the decoder checks it.
type passThrough struct{ steps []step }

// schemaPath is the field's path in the notation of the v1.6 path lists:
// pdms[].affinity, [] for the items of a list, {} for the values of a map.
func (p passThrough) schemaPath() string {
	var parts []string
	for _, s := range p.steps {
		k := s.key
		if s.list {
			k += "[]"
		}
		if s.mapped {
			k += "{}"
		}
		parts = append(parts, k)
	}
	return strings.Join(parts, ".")
}

// typoDoc returns the spec with a typo inside the field and the JSON path the
// decoder must name.
func (p passThrough) typoDoc() (spec any, path string) {
	var value any = map[string]any{typo: true}
	last := p.steps[len(p.steps)-1]
	path = typo
	if last.list {
		value, path = []any{value}, "[0]."+path
	}
	if last.mapped {
		value, path = map[string]any{"k": value}, "k."+path
	}
	for i := len(p.steps) - 1; i >= 0; i-- {
		s := p.steps[i]
		if i < len(p.steps)-1 {
			if s.mapped {
				value, path = map[string]any{"k": value}, "k."+path
			}
			if s.list {
				value, path = []any{value}, "[0]."+path
			}
		}
		value, path = map[string]any{s.key: value}, s.key+"."+path
	}
	return value, "spec." + strings.ReplaceAll(path, ".[0]", "[0]")
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// opaque reports whether the decoder reads t by its own UnmarshalJSON, so
// that no key below it is checked (Config, Quantity, IntOrString).
func opaque(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// isKubernetesType reports whether t is a struct of the Kubernetes API.
func isKubernetesType(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && strings.HasPrefix(t.PkgPath(), "k8s.io/api/")
}

// passThroughFields finds, by reflection, every field of a Kubernetes type
// under t, so a new one is covered without a change to the test.
func passThroughFields(t reflect.Type, prefix []step, seen map[reflect.Type]bool) []passThrough {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || opaque(t) || seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	var out []passThrough
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			if !isKubernetesType(f.Type) {
				out = append(out, passThroughFields(f.Type, prefix, seen)...)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		s, elem := step{key: name}, f.Type
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		switch elem.Kind() {
		case reflect.Slice, reflect.Array:
			s.list, elem = true, elem.Elem()
		case reflect.Map:
			s.mapped, elem = true, elem.Elem()
		}
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		steps := append(slices.Clone(prefix), s)
		if isKubernetesType(elem) && !opaque(elem) {
			out = append(out, passThrough{steps: steps})
			continue
		}
		out = append(out, passThroughFields(elem, steps, seen)...)
	}
	return out
}

// TestUnknownFieldsInEveryPassThrough puts a typo inside every field of a
// Kubernetes type of every kind's spec and checks that the decoder names it
// by its full JSON path, keeps the rest of the spec and fails nothing.
func TestUnknownFieldsInEveryPassThrough(t *testing.T) {
	t.Parallel()
	for _, kc := range kindCases {
		fields := passThroughFields(kc.spec, nil, map[reflect.Type]bool{})
		if len(fields) < kc.minFields {
			t.Errorf("%s: found %d pass-through fields, want at least %d", kc.kind, len(fields), kc.minFields)
		}
		for _, p := range fields {
			t.Run(kc.kind+"/"+p.schemaPath(), func(t *testing.T) {
				t.Parallel()
				spec, want := p.typoDoc()
				data, err := json.Marshal(map[string]any{"apiVersion": "pingcap.com/v1alpha1", "kind": kc.kind,
					"metadata": map[string]any{"name": "x"}, "spec": spec, "status": map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				obj := kc.object()
				if err := json.Unmarshal(data, obj); err != nil {
					t.Fatalf("decoding failed: %v", err)
				}
				if derr := reflect.ValueOf(obj).Elem().FieldByName("DecodeError").Interface().(*DecodeError); derr != nil {
					t.Fatalf("DecodeError %v; the typo must not make the spec unreadable", derr)
				}
				got := obj.(interface{ GetUnknownFields() []string }).GetUnknownFields()
				if !slices.Equal(got, []string{want}) {
					t.Errorf("UnknownFields = %q, want [%q]", got, want)
				}
			})
		}
	}
}

// TestUnknownFieldsKeepTheSpec checks a realistic spec: typos deep inside
// affinity and a sidecar are named, the known fields around them are read,
// and encoding the object does not write the list.
func TestUnknownFieldsKeepTheSpec(t *testing.T) {
	t.Parallel()
	data := `{"metadata":{"name":"c"},"spec":{"tikv":{"replicas":3,
	  "affinity":{"nodeAfinity":{},"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
	    {"weight":1,"podAffinityTerm":{"topologyKey":"zone","labelSelectr":{}}}]}},
	  "additionalContainers":[{"name":"a","image":"busybox"},{"name":"b","imagePullPolcy":"Always"}]},
	  "pd":{"config":{"unknownToUs":{"deep":1}}}}}`
	var tc TidbCluster
	if err := json.Unmarshal([]byte(data), &tc); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"spec.tikv.additionalContainers[1].imagePullPolcy",
		"spec.tikv.affinity.nodeAfinity",
		"spec.tikv.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelectr",
	}
	if !slices.Equal(tc.UnknownFields, want) {
		t.Errorf("UnknownFields = %q, want %q (config is free-form, never listed)", tc.UnknownFields, want)
	}
	if tc.Spec.TiKV == nil || tc.Spec.TiKV.Replicas != 3 || len(tc.Spec.TiKV.AdditionalContainers) != 2 ||
		tc.Spec.TiKV.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "zone" {
		t.Errorf("known fields around the typos were not read: %+v", tc.Spec.TiKV)
	}
	out, err := json.Marshal(&tc)
	if err != nil || strings.Contains(string(out), "UnknownFields") || strings.Contains(string(out), "nodeAfinity") {
		t.Errorf("encoding wrote the list or the dropped field: %s (%v)", out, err)
	}
	var again TidbCluster
	if err := json.Unmarshal(out, &again); err != nil || again.UnknownFields != nil {
		t.Errorf("a re-read of the encoded object lists %q (%v), want none", again.UnknownFields, err)
	}
}

// TestUnknownFieldsBounded checks that a spec full of typos records a
// bounded list that says how many more there are.
func TestUnknownFieldsBounded(t *testing.T) {
	t.Parallel()
	keys := map[string]any{}
	for i := range 50 {
		keys["typo"+string(rune('A'+i/26))+string(rune('a'+i%26))] = 1
	}
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "c"},
		"spec": map[string]any{"affinity": keys}})
	var tc TidbCluster
	if err := json.Unmarshal(data, &tc); err != nil {
		t.Fatal(err)
	}
	if len(tc.UnknownFields) != maxUnknownFields || tc.UnknownFields[maxUnknownFields-1] != "… and 31 more" ||
		tc.UnknownFields[0] != "spec.affinity.typoAa" {
		t.Errorf("UnknownFields = %q", tc.UnknownFields)
	}
}
