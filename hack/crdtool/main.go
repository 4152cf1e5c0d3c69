// Command crdtool finishes the CRDs that controller-gen writes: it gives every
// pass-through array (a Kubernetes list type kept out of the schema to keep the
// CRD small) the items schema that structural CRDs require, bounds the values
// of label maps (controller-gen has no marker for map values), then writes each
// CRD back and concatenates them into one file that plain `kubectl apply`
// accepts.
//
// Usage: go run ./hack/crdtool -dir manifests/crd -out manifests/crd.yaml
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
)

// maxCRDBytes is the budget of one CRD as JSON: client-side `kubectl apply`
// stores the whole object in an annotation, and annotations are capped at 256 KiB.
const maxCRDBytes = 200 * 1024

// labelMaps are the names of the map[string]string fields whose values end up
// as Kubernetes label values (pod and Service labels, node selectors).
var labelMaps = map[string]bool{"labels": true, "nodeSelector": true}

// labelValuePattern and maxLabelValue are Kubernetes' rules for a label value
// (k8s.io/apimachinery/pkg/util/validation.IsValidLabelValue). Checked by the
// schema itself they cost no CEL budget, and the API server's error names the
// exact key, such as spec.labels.team.
const (
	labelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	maxLabelValue     = 63
)

func main() {
	dir := flag.String("dir", "manifests/crd", "directory of the per-kind CRD files")
	out := flag.String("out", "manifests/crd.yaml", "file that receives every CRD")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "crdtool:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRD files in %s", dir)
	}
	sort.Strings(files)
	var all bytes.Buffer
	for _, f := range files {
		doc, err := finishFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		all.WriteString("---\n")
		all.Write(doc)
	}
	return os.WriteFile(out, all.Bytes(), 0o644)
}

// finishFile rewrites one CRD file in place and returns its new YAML.
func finishFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, err
	}
	walk(crd)
	asJSON, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	if len(asJSON) > maxCRDBytes {
		return nil, fmt.Errorf("CRD is %d bytes as JSON, over the %d budget for client-side apply", len(asJSON), maxCRDBytes)
	}
	doc, err := yaml.Marshal(crd)
	if err != nil {
		return nil, err
	}
	return doc, os.WriteFile(path, doc, 0o644)
}

// walk visits every schema node; a pass-through array gets a pass-through
// object as its items, which is what structural schemas demand.
func walk(node any) {
	switch n := node.(type) {
	case map[string]any:
		if n["type"] == "array" && n["items"] == nil && n["x-kubernetes-preserve-unknown-fields"] == true {
			delete(n, "x-kubernetes-preserve-unknown-fields")
			n["items"] = map[string]any{
				"type":                                 "object",
				"x-kubernetes-preserve-unknown-fields": true,
			}
		}
		if props, ok := n["properties"].(map[string]any); ok {
			for name, prop := range props {
				if labelMaps[name] {
					boundLabelValues(prop)
				}
			}
		}
		for _, v := range n {
			walk(v)
		}
	case []any:
		for _, v := range n {
			walk(v)
		}
	}
}

// boundLabelValues gives a map of strings the label value rules.
func boundLabelValues(node any) {
	m, ok := node.(map[string]any)
	if !ok || m["type"] != "object" {
		return
	}
	values, ok := m["additionalProperties"].(map[string]any)
	if !ok || values["type"] != "string" {
		return
	}
	values["maxLength"] = maxLabelValue
	values["pattern"] = labelValuePattern
}
