package fieldcheck

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/packages"
)

// funcReads is what the body of one function selects: the fields it reads
// and the functions and methods it names.
type funcReads struct {
	fields map[*types.Var]bool
	calls  map[*types.Func]bool
}

// index maps each function of the indexed packages (nil for code outside
// any function) to what its body reads.
type index map[*types.Func]*funcReads

// indexPackages records, for every function of pkgs' non-test files, the
// fields it reads (selected other than as an assignment's target) and the
// functions it names.
func indexPackages(pkgs []*packages.Package) index {
	idx := index{}
	for _, p := range pkgs {
		for _, file := range p.Syntax {
			written := assignedSelectors(file)
			for _, decl := range file.Decls {
				var fn *types.Func
				if fd, ok := decl.(*ast.FuncDecl); ok {
					fn, _ = p.TypesInfo.Defs[fd.Name].(*types.Func)
				}
				r := idx.of(fn)
				ast.Inspect(decl, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.SelectorExpr:
						if !written[n] {
							markSelection(p.TypesInfo.Selections[n], r.fields)
						}
					case *ast.Ident:
						if f, ok := p.TypesInfo.Uses[n].(*types.Func); ok {
							r.calls[f.Origin()] = true
						}
					}
					return true
				})
			}
		}
	}
	return idx
}

// of returns fn's record, creating it.
func (idx index) of(fn *types.Func) *funcReads {
	if fn != nil {
		fn = fn.Origin()
	}
	r := idx[fn]
	if r == nil {
		r = &funcReads{fields: map[*types.Var]bool{}, calls: map[*types.Func]bool{}}
		idx[fn] = r
	}
	return r
}

// readFields returns the fields the reader packages read, directly or
// through an accessor: a function of accessors that some reader names, and
// the functions of the accessors' package that one of those names in turn.
func readFields(readers, accessorPkgs []*packages.Package, isAccessor func(*types.Func) bool) map[*types.Var]bool {
	read := map[*types.Var]bool{}
	named := map[*types.Func]bool{}
	for _, r := range indexPackages(readers) {
		for f := range r.fields {
			read[f] = true
		}
		for fn := range r.calls {
			named[fn] = true
		}
	}
	acc := indexPackages(accessorPkgs)
	var todo []*types.Func
	// Code outside any function (the component descriptors' Spec closures) reads for
	// every accessor that calls through the descriptors.
	if r, ok := acc[nil]; ok {
		for f := range r.fields {
			read[f] = true
		}
		for fn := range r.calls {
			todo = append(todo, fn)
		}
	}
	for fn := range named {
		if isAccessor(fn) {
			todo = append(todo, fn)
		}
	}
	done := map[*types.Func]bool{}
	for len(todo) > 0 {
		fn := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		r, ok := acc[fn]
		if done[fn] || !ok {
			continue
		}
		done[fn] = true
		for f := range r.fields {
			read[f] = true
		}
		for callee := range r.calls {
			todo = append(todo, callee)
		}
	}
	return read
}
