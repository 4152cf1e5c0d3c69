package fieldcheck

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
)

// fieldPath is one JSON field reachable from a kind's spec: its path as a
// user writes it (lists and maps add nothing: spec.tikv.storageVolumes.name)
// and the Go field that decodes it.
type fieldPath struct {
	path  string
	field *types.Var
}

// specFields lists every JSON field reachable from the struct type root
// (a kind's spec) under prefix. Structs declared in apiPkg are walked into;
// any other type (a Kubernetes type, a Quantity, a map) is a leaf, read
// whole. Inline and embedded structs add their fields to the parent's path.
// A struct already on the path is not walked again (no endless recursion).
func specFields(root types.Type, prefix, apiPkg string) []fieldPath {
	var out []fieldPath
	var walk func(t types.Type, prefix string, seen []*types.Named)
	walk = func(t types.Type, prefix string, seen []*types.Named) {
		named, st := apiStruct(t, apiPkg)
		if st == nil || slices.Contains(seen, named) {
			return
		}
		seen = append(seen, named)
		for i := range st.NumFields() {
			f := st.Field(i)
			name, inline, skip := jsonName(f, st.Tag(i))
			if skip || !f.Exported() {
				continue
			}
			if inline {
				walk(f.Type(), prefix, seen)
				continue
			}
			p := prefix + "." + name
			out = append(out, fieldPath{path: p, field: f})
			walk(f.Type(), p, seen)
		}
	}
	walk(root, prefix, nil)
	return out
}

// apiStruct returns the named struct type t stands for (through pointers,
// slices, arrays and map values) when it is declared in apiPkg.
func apiStruct(t types.Type, apiPkg string) (*types.Named, *types.Struct) {
	for {
		switch u := t.(type) {
		case *types.Pointer:
			t = u.Elem()
			continue
		case *types.Slice:
			t = u.Elem()
			continue
		case *types.Array:
			t = u.Elem()
			continue
		case *types.Map:
			t = u.Elem()
			continue
		}
		break
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != apiPkg {
		return nil, nil
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok {
		return nil, nil
	}
	return named, st
}

// jsonName returns the JSON name of f as encoding/json reads it, whether f
// is inlined into its parent, and whether JSON skips it.
func jsonName(f *types.Var, tag string) (name string, inline, skip bool) {
	v, ok := reflect.StructTag(tag).Lookup("json")
	if v == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(v, ",")
	if slices.Contains(strings.Split(opts, ","), "inline") || (f.Embedded() && name == "") {
		return "", true, false
	}
	if !ok || name == "" {
		name = f.Name()
	}
	return name, false, false
}

// markSelection marks the field s selects and the embedded fields it goes
// through.
func markSelection(s *types.Selection, read map[*types.Var]bool) {
	if s == nil || s.Kind() != types.FieldVal {
		return
	}
	t := s.Recv()
	for _, i := range s.Index() {
		for {
			if p, ok := t.Underlying().(*types.Pointer); ok {
				t = p.Elem()
				continue
			}
			break
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return
		}
		f := st.Field(i)
		read[f.Origin()] = true
		t = f.Type()
	}
}

// assignedSelectors returns the selector expressions that are the target of
// an assignment in file (x.F = v, x.F += v): writes, not reads.
func assignedSelectors(file *ast.File) map[*ast.SelectorExpr]bool {
	out := map[*ast.SelectorExpr]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && a.Tok != token.DEFINE {
			for _, lhs := range a.Lhs {
				if sel, ok := lhs.(*ast.SelectorExpr); ok {
					out[sel] = true
				}
			}
		}
		return true
	})
	return out
}
