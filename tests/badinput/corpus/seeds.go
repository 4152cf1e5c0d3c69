package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
)

// Seeds returns, as JSON, every object of kind (TidbCluster, Backup,
// Restore or BackupSchedule; "" for all) found in the repository's
// examples/**/*.yaml and in the corpus, for f.Add. It locates examples/ by
// walking up from the working directory to go.mod, so it works from any
// package's test.
func Seeds(kind string) ([][]byte, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, doc := range bytes.Split(raw, []byte("\n---")) {
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			var meta struct{ Kind string }
			if json.Unmarshal(j, &meta) != nil || meta.Kind == "" || (kind != "" && meta.Kind != kind) {
				continue
			}
			out = append(out, j)
		}
	}
	cases, err := Cases()
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if kind != "" && KindOf(c) != kind {
			continue
		}
		j, err := JSON(c)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// YAMLSeeds returns the YAML documents of examples/**/*.yaml as written
// (comments, TOML strings and all), for targets that read YAML files.
func YAMLSeeds() ([][]byte, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Poke returns doc (a JSON object) with one node changed, for structural
// fuzzing: a fuzzer mutating JSON bytes mostly breaks the syntax, while Poke
// keeps the document well-formed and puts odd values where the decoder,
// defaulting, validation and builders must cope. sel picks the node (in a
// stable walk order) and what to put there: s, n, -n, a bool, null, an empty
// object or list, [s], {s: n}, or removing the node; a map node may instead
// get key s added. It returns doc unchanged when sel is 0 or doc is not JSON.
func Poke(doc []byte, sel uint16, s string, n int64) []byte {
	if sel == 0 {
		return doc
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if dec.Decode(&root) != nil {
		return doc
	}
	var nodes []node
	walk(root, nil, "", &nodes)
	if len(nodes) == 0 {
		return doc
	}
	target := nodes[int(sel)%len(nodes)]
	value := pokeValue(sel/uint16(len(nodes))%11, s, n, target.value)
	switch {
	case target.parent == nil:
		return doc
	case value == removeMarker:
		target.parent.remove(target.key)
	default:
		target.parent.set(target.key, value)
	}
	out, err := json.Marshal(root)
	if err != nil {
		return doc
	}
	return out
}

type marker struct{}

var removeMarker any = &marker{}

func pokeValue(choice uint16, s string, n int64, old any) any {
	switch choice {
	case 0:
		return s
	case 1:
		return json.Number(fmt.Sprint(n))
	case 2:
		return json.Number(fmt.Sprint(-n))
	case 3:
		return n%2 == 0
	case 4:
		return nil
	case 5:
		return map[string]any{}
	case 6:
		return []any{}
	case 7:
		return []any{s}
	case 8:
		return map[string]any{s: json.Number(fmt.Sprint(n))}
	case 9:
		if m, ok := old.(map[string]any); ok {
			m[s] = json.Number(fmt.Sprint(n))
			return m
		}
		return s
	default:
		return removeMarker
	}
}

type container interface {
	set(key any, v any)
	remove(key any)
}

type mapNode map[string]any

func (m mapNode) set(key any, v any) { m[key.(string)] = v }
func (m mapNode) remove(key any)     { delete(m, key.(string)) }

type sliceNode struct{ s []any }

func (l *sliceNode) set(key any, v any) { l.s[key.(int)] = v }
func (l *sliceNode) remove(key any)     { l.s[key.(int)] = nil }

type node struct {
	parent container
	key    any
	value  any
}

// walk lists every node under v in a stable order (map keys sorted).
func walk(v any, parent container, key any, out *[]node) {
	*out = append(*out, node{parent: parent, key: key, value: v})
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walk(t[k], mapNode(t), k, out)
		}
	case []any:
		l := &sliceNode{s: t}
		for i := range t {
			walk(t[i], l, i, out)
		}
	}
}
