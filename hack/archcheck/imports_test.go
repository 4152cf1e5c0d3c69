// Package archcheck holds the test that keeps docs/design/packages.md's package table
// true: every package of pkg/ and cmd/ is named by a row, and imports only
// the packages of ours its row allows.
package archcheck

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/kubetidb/tidb-operator/"

// abbreviations the table uses for long package paths.
var abbreviations = map[string]string{
	"v1alpha1":      "pkg/apis/pingcap/v1alpha1",
	"…/components":  "pkg/apis/pingcap/v1alpha1/components",
	"…/defaulting":  "pkg/apis/pingcap/v1alpha1/defaulting",
	"…/validation":  "pkg/apis/pingcap/v1alpha1/validation",
	"…/unsupported": "pkg/apis/pingcap/v1alpha1/unsupported",
}

type row struct {
	packages []string // patterns
	allowed  []string // patterns; nil with checked=false
	checked  bool
}

func TestPackageImportsMatchArchDoc(t *testing.T) {
	t.Parallel()
	rows := readTable(t, "../../docs/design/packages.md")
	pkgs := listPackages(t, "../..")
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages; is the repository root right?", len(pkgs))
	}
	for _, pkg := range pkgs {
		r, ok := rowOf(rows, pkg.path)
		if !ok {
			t.Errorf("%s: no row of docs/design/packages.md's package table names it", pkg.path)
			continue
		}
		for _, imp := range pkg.imports {
			if imp != pkg.path && r.checked && !matchesAny(r.allowed, imp) {
				t.Errorf("%s imports %s, which its row in docs/design/packages.md does not allow", pkg.path, imp)
			}
		}
	}
}

func TestPatterns(t *testing.T) {
	t.Parallel()
	if !matches("pkg/client/...", "pkg/client/listers/pingcap/v1alpha1") || matches("pkg/client/...", "pkg/clientx") {
		t.Error("subtree pattern")
	}
	got := expand("pkg/manager/{pd,tikv}")
	if len(got) != 2 || got[1] != "pkg/manager/tikv" {
		t.Errorf("brace expansion: %v", got)
	}
	rows := []row{{packages: []string{"pkg/a"}, allowed: nil, checked: true}}
	if _, ok := rowOf(rows, "pkg/b"); ok {
		t.Error("a package no row names was found")
	}
}

var code = regexp.MustCompile("`([^`]+)`")

// readTable parses the rows of the "## Packages" table.
func readTable(t *testing.T, path string) []row {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "## Packages")
	if start < 0 {
		t.Fatal("docs/design/packages.md has no ## Packages section")
	}
	text = text[start:]
	if end := strings.Index(text[1:], "\n## "); end >= 0 {
		text = text[:end+1]
	}
	var rows []row
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.Contains(cells[1], "`") {
			continue
		}
		r := row{checked: !strings.Contains(cells[3], "not checked")}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			r.packages = append(r.packages, expand(m[1])...)
		}
		for _, m := range code.FindAllStringSubmatch(cells[3], -1) {
			p := m[1]
			if full, ok := abbreviations[p]; ok {
				p = full
			}
			r.allowed = append(r.allowed, expand(p)...)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("no rows parsed from docs/design/packages.md's package table")
	}
	return rows
}

// expand turns "pkg/manager/{pd,tikv}" into both paths.
func expand(p string) []string {
	open, end := strings.IndexByte(p, '{'), strings.IndexByte(p, '}')
	if open < 0 || end < open {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:end], ",") {
		out = append(out, expand(p[:open]+alt+p[end+1:])...)
	}
	return out
}

func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return pattern == path
}

func matchesAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if matches(p, path) {
			return true
		}
	}
	return false
}

// rowOf returns the row naming path; an exact name wins over a subtree.
func rowOf(rows []row, path string) (row, bool) {
	var found *row
	for i := range rows {
		for _, p := range rows[i].packages {
			if p == path {
				return rows[i], true
			}
			if matches(p, path) && found == nil {
				found = &rows[i]
			}
		}
	}
	if found != nil {
		return *found, true
	}
	return row{}, false
}

type pkgInfo struct {
	path    string
	imports []string // ours only, module prefix removed
}

// listPackages returns every non-test package under pkg/ and cmd/ with its
// imports of ours.
func listPackages(t *testing.T, root string) []pkgInfo {
	t.Helper()
	var out []pkgInfo
	for _, top := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(dir string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			bp, err := build.Default.ImportDir(dir, 0)
			if err != nil {
				return nil //nolint:nilerr // no buildable non-test Go files here
			}
			rel, _ := filepath.Rel(root, dir)
			info := pkgInfo{path: filepath.ToSlash(rel)}
			for _, imp := range bp.Imports {
				if ours, ok := strings.CutPrefix(imp, module); ok {
					info.imports = append(info.imports, ours)
				}
			}
			sort.Strings(info.imports)
			out = append(out, info)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
