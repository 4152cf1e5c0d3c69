package fieldcheck

import (
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// loadMode type-checks the loaded packages from source, with syntax.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedTypes |
	packages.NeedSyntax | packages.NeedTypesInfo

// load type-checks the packages patterns match, from dir, without their
// tests; it fails the test on any load or type error.
func load(t *testing.T, dir string, patterns ...string) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{Mode: loadMode, Dir: dir}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatalf("load %v: %v", patterns, err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		t.Fatalf("load %v: %s", patterns, strings.Join(errs, "\n"))
	}
	return pkgs
}

// kindSpecs returns, per kind of api (a type with both a Spec and a Status
// field, e.g. TidbCluster), the type of its Spec field.
func kindSpecs(api *types.Package) map[string]types.Type {
	out := map[string]types.Type{}
	scope := api.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		var spec types.Type
		hasStatus := false
		for i := range st.NumFields() {
			switch st.Field(i).Name() {
			case "Spec":
				spec = st.Field(i).Type()
			case "Status":
				hasStatus = true
			}
		}
		if spec != nil && hasStatus {
			out[name] = spec
		}
	}
	return out
}

// findPackage returns the loaded package of path.
func findPackage(t *testing.T, pkgs []*packages.Package, path string) *packages.Package {
	t.Helper()
	for _, p := range pkgs {
		if p.PkgPath == path {
			return p
		}
	}
	t.Fatalf("package %s not loaded", path)
	return nil
}
