package component

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// RenderConfig renders a component's config as TOML, with forced values
// (such as TLS paths) set over the user's at their dotted keys. Keys are
// sorted, so the same config always renders the same text. Whole numbers
// written in YAML stay integers.
func RenderConfig(cfg *v1alpha1.Config, forced map[string]any) (string, error) {
	tree := map[string]any{}
	if cfg != nil {
		for k, v := range cfg.Items {
			tree[k] = normalize(v)
		}
	}
	// In key order, so that a conflict is reported the same way every time.
	for _, key := range slices.Sorted(maps.Keys(forced)) {
		if err := setDotted(tree, key, forced[key]); err != nil {
			return "", err
		}
	}
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetIndentTables(false)
	if err := enc.Encode(tree); err != nil {
		return "", fmt.Errorf("render TOML: %w", err)
	}
	return buf.String(), nil
}

// normalize turns json.Number into int64 or float64 and recurses.
func normalize(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalize(x)
		}
		return out
	default:
		return v
	}
}

// setDotted sets tree["a"]["b"]["c"] = v for key "a.b.c", creating tables.
func setDotted(tree map[string]any, key string, v any) error {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := tree[p]
		if !ok {
			m := map[string]any{}
			tree[p] = m
			tree = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("config key %s: %s is not a table", key, p)
		}
		tree = m
	}
	tree[parts[len(parts)-1]] = v
	return nil
}
