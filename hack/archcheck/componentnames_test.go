package archcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// componentNames are the TidbCluster components' names, which only the
// descriptors (pkg/apis/pingcap/v1alpha1/components) and the components'
// own packages may branch on.
var componentNames = []string{"pd", "tikv", "tidb", "tiflash", "ticdc", "pump", "tiproxy"}

// componentConstants are our constants that spell those names, by package.
var componentConstants = map[string][]string{
	"names":      {"PD", "TiKV", "TiDB", "TiFlash", "TiCDC", "Pump", "TiProxy"},
	"label":      {"PDLabelVal", "TiKVLabelVal", "TiDBLabelVal", "TiFlashLabelVal", "TiCDCLabelVal", "PumpLabelVal", "TiProxyLabelVal"},
	"defaulting": {"ComponentPD", "ComponentTiKV", "ComponentTiDB", "ComponentTiFlash", "ComponentTiCDC", "ComponentPump", "ComponentTiProxy"},
}

// nameKeyedAllowed are the directories that may branch on a component
// name: the descriptors, each component's own package (and the store
// package TiKV and TiFlash share), the packages that define the names,
// and the code speaking PD's or the simulator's vocabulary, where "tiflash"
// is a placement group or store engine and "pd" a discovery register type.
var nameKeyedAllowed = []string{
	"pkg/apis/pingcap/v1alpha1/components", "pkg/names", "pkg/label",
	"pkg/manager/pd", "pkg/manager/tikv", "pkg/manager/tidb", "pkg/manager/tiflash", "pkg/manager/ticdc",
	"pkg/manager/pump", "pkg/manager/tiproxy", "pkg/manager/store",
	"pkg/pdapi", "pkg/discovery", "pkg/simulator", "cmd/tidb-simulator", "pkg/client",
}

// TestNoComponentNameSwitches fails for a switch case, a comparison or a
// map key on a component name (a literal such as "tikv" or a constant such
// as names.TiKV) outside nameKeyedAllowed: generic code reads what it needs
// from the component's descriptor instead (components.Lookup, components.All).
func TestNoComponentNameSwitches(t *testing.T) {
	t.Parallel()
	root := "../.."
	for _, top := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if allowedNameKeyed(filepath.ToSlash(filepath.Dir(rel))) {
				return nil
			}
			for _, where := range nameKeyedSites(t, path) {
				t.Errorf("%s:%s branches on a component name: read it from the component's descriptor "+
					"(pkg/apis/pingcap/v1alpha1/components)", rel, where)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestNameKeyedSitesFound(t *testing.T) {
	t.Parallel()
	src := `package x
func f(c string, m map[string]int) bool {
	switch c {
	case "tikv":
	}
	_ = map[string]int{names.PD: 1, "other": 2}
	return c == label.TiDBLabelVal || c == "discovery"
}`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := sitesIn(fset, file); len(got) != 3 {
		t.Errorf("found %v, want the case, the map key and the comparison", got)
	}
	if !allowedNameKeyed("pkg/manager/tikv") || allowedNameKeyed("pkg/manager/component") || allowedNameKeyed("pkg/manager/tikvx") {
		t.Error("allowed directories")
	}
}

func allowedNameKeyed(dir string) bool {
	for _, a := range nameKeyedAllowed {
		if dir == a || strings.HasPrefix(dir, a+"/") {
			return true
		}
	}
	return false
}

func nameKeyedSites(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sitesIn(fset, file)
}

// sitesIn lists the line numbers of the name-keyed sites of file.
func sitesIn(fset *token.FileSet, file *ast.File) []string {
	var out []string
	report := func(n ast.Node) { out = append(out, strconv.Itoa(fset.Position(n.Pos()).Line)) }
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				if isComponentName(e) {
					report(e)
				}
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (isComponentName(n.X) || isComponentName(n.Y)) {
				report(n)
			}
		case *ast.CompositeLit:
			if _, ok := n.Type.(*ast.MapType); ok {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && isComponentName(kv.Key) {
						report(kv)
					}
				}
			}
		}
		return true
	})
	return out
}

// isComponentName reports whether e is a component name literal or one of
// our constants spelling it.
func isComponentName(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		v, err := strconv.Unquote(e.Value)
		return e.Kind == token.STRING && err == nil && slices.Contains(componentNames, v)
	case *ast.SelectorExpr:
		pkg, ok := e.X.(*ast.Ident)
		return ok && slices.Contains(componentConstants[pkg.Name], e.Sel.Name)
	}
	return false
}
