package v1alpha1

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// v16PathsDir holds one file of spec field paths per kind of the TiDB
// Operator v1.6 API (see its README).
const v16PathsDir = "testdata/v1.6-api-paths"

// crdDir holds the CRDs hack/update-crds.sh generates from these types.
var crdDir = filepath.Join("..", "..", "..", "..", "manifests", "crd")

// notServedYet are the v1.6 kinds we have no CRD for. The test fails when one
// of them gets a CRD, so that its paths are checked from then on.
var notServedYet = map[string]bool{}

// mustServe are the kinds whose v1.6 YAML must apply unchanged today.
var mustServe = []string{
	"backups", "backupschedules", "compactbackups", "dmclusters", "restores", "tidbclusters", "tidbinitializers", "tidbmonitors",
	"tidbdashboards", "tidbngmonitorings",
}

// TestV16PathsAccepted proves the TiDB Operator v1.6 API applies unchanged:
// every spec path of every v1.6 kind we serve is accepted by our generated
// CRD, and every v1.6 kind without a CRD is one we list as not served yet.
func TestV16PathsAccepted(t *testing.T) {
	t.Parallel()
	lists, err := filepath.Glob(filepath.Join(v16PathsDir, "*.txt"))
	if err != nil || len(lists) != len(mustServe)+len(notServedYet) {
		t.Fatalf("want %d path lists in %s, got %d (%v)", len(mustServe)+len(notServedYet), v16PathsDir, len(lists), err)
	}
	served := map[string]bool{}
	for _, list := range lists {
		plural := strings.TrimSuffix(filepath.Base(list), ".txt")
		crdFile := filepath.Join(crdDir, "pingcap.com_"+plural+".yaml")
		_, statErr := os.Stat(crdFile)
		switch {
		case statErr == nil && notServedYet[plural]:
			t.Errorf("%s now has a CRD (%s): remove it from notServedYet so its v1.6 paths are checked", plural, crdFile)
		case statErr == nil:
			served[plural] = true
			t.Run(plural, func(t *testing.T) {
				t.Parallel()
				checkPaths(t, crdFile, list)
			})
		case !notServedYet[plural]:
			t.Errorf("no CRD %s for the v1.6 kind %s: %v", crdFile, plural, statErr)
		}
	}
	for _, plural := range mustServe {
		if !served[plural] {
			t.Errorf("the v1.6 kind %s is not checked", plural)
		}
	}
}

// checkPaths fails listing every path of pathsFile the CRD does not accept.
func checkPaths(t *testing.T, crdFile, pathsFile string) {
	t.Helper()
	root := specSchema(t, crdFile)
	paths := readPaths(t, pathsFile)
	var missing []string
	for _, p := range paths {
		if !schemaAccepts(root, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d v1.6 paths are not accepted by %s:\n  %s", len(missing), len(paths), crdFile, strings.Join(missing, "\n  "))
	}
}

// TestSchemaAccepts checks the walker on a small schema: a missing segment is
// refused, pass-through ancestors accept anything below them, lists and maps
// are walked through their items.
func TestSchemaAccepts(t *testing.T) {
	t.Parallel()
	const schema = `
type: object
properties:
  spec:
    type: object
    properties:
      pd:
        type: object
        properties:
          replicas: {type: integer}
          affinity: {type: object, x-kubernetes-preserve-unknown-fields: true}
          env:
            type: array
            items: {type: object, x-kubernetes-preserve-unknown-fields: true}
          storageVolumes:
            type: array
            items: {type: object, properties: {name: {type: string}}}
          labels:
            type: object
            additionalProperties: {type: string}
`
	var root map[string]any
	if err := yaml.Unmarshal([]byte(schema), &root); err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"spec":                                 true,
		"spec.pd.replicas":                     true,
		"spec.pd.replica":                      false,
		"spec.pd.affinity.nodeAffinity.x[].y":  true,
		"spec.pd.env[].valueFrom.secretKeyRef": true,
		"spec.pd.storageVolumes[].name":        true,
		"spec.pd.storageVolumes[].size":        false,
		"spec.pd.storageVolumes.name":          false,
		"spec.pd.labels{}":                     true,
		"spec.pd.replicas[]":                   false,
		"spec.tikv":                            false,
	}
	for path, want := range cases {
		if got := schemaAccepts(root, path); got != want {
			t.Errorf("schemaAccepts(%q) = %v, want %v", path, got, want)
		}
	}
}

// specSchema reads a CRD file and returns the openAPIV3Schema of its only
// version (the object's schema, whose properties include spec).
func specSchema(t *testing.T, crdFile string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatalf("%s: %v", crdFile, err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		t.Fatalf("%s: want one version with a schema, got %d versions", crdFile, len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// readPaths returns the non-empty lines of a path list, sorted.
func readPaths(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p := strings.TrimSpace(sc.Text()); p != "" {
			paths = append(paths, p)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(paths) == 0 {
		t.Fatalf("%s lists no paths", file)
	}
	sort.Strings(paths)
	return paths
}

// schemaAccepts reports whether an object with the given field path passes a
// structural schema without being pruned or refused as unknown: every segment
// is a property (lists through items, maps through additionalProperties), or
// an ancestor preserves unknown fields.
func schemaAccepts(node map[string]any, path string) bool {
	for _, seg := range strings.Split(path, ".") {
		if preservesUnknown(node) {
			return true
		}
		name, suffix := seg, ""
		if i := strings.IndexAny(seg, "[{"); i >= 0 {
			name, suffix = seg[:i], seg[i:]
		}
		props, _ := node["properties"].(map[string]any)
		child, ok := props[name].(map[string]any)
		if !ok {
			return false
		}
		node = child
		for ; suffix != ""; suffix = suffix[2:] {
			if preservesUnknown(node) {
				return true
			}
			key := map[string]string{"[]": "items", "{}": "additionalProperties"}[suffix[:min(2, len(suffix))]]
			next, ok := node[key].(map[string]any)
			if key == "" || !ok {
				return false
			}
			node = next
		}
	}
	return true
}

// preservesUnknown reports whether a schema node keeps any field below it.
func preservesUnknown(node map[string]any) bool {
	v, _ := node["x-kubernetes-preserve-unknown-fields"].(bool)
	return v
}
