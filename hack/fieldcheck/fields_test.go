package fieldcheck

import (
	"go/types"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
)

const module = "github.com/kubetidb/tidb-operator"

// apiPkg declares the served kinds.
const apiPkg = module + "/pkg/apis/pingcap/v1alpha1"

// accessorPkg holds the accessor the components read their pod fields
// through (cluster-level value or the component's own).
const accessorPkg = apiPkg + "/defaulting"

// accessorType is the accessor: its methods, and the functions that
// return one, read the spec on behalf of their callers.
const accessorType = "ComponentAccessor"

// isAccessor reports whether fn reads on behalf of its caller: a method of
// the accessor type or a function returning one.
func isAccessor(fn *types.Func) bool {
	if fn.Pkg() == nil || fn.Pkg().Path() != accessorPkg {
		return false
	}
	sig := fn.Signature()
	if recv := sig.Recv(); recv != nil {
		return typeName(recv.Type()) == accessorType
	}
	return sig.Results().Len() == 1 && typeName(sig.Results().At(0).Type()) == accessorType
}

// typeName is the name of the named type t is or points to.
func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// notReaders are the packages whose reading a field is not acting on it:
// the API packages themselves (types, defaults, validation, the registry
// of what is not acted on) and test support.
var notReaders = []string{
	module + "/pkg/apis/",
	module + "/pkg/manager/golden",
	module + "/pkg/podhttp/podhttptest",
}

// TestEveryAcceptedFieldIsRead fails for each JSON field reachable from the
// spec of a served kind that no product code outside pkg/apis reads and no
// entry of the unsupported registry covers.
func TestEveryAcceptedFieldIsRead(t *testing.T) {
	pkgs := load(t, "../..", "./pkg/...", "./cmd/...")
	unread, read := unreadFields(t, pkgs, apiPkg, accessorPkg, unsupported.ByKind())
	if read < 500 {
		t.Fatalf("found only %d fields read; is the loader right?", read)
	}
	if len(unread) > 0 {
		t.Errorf("%d fields are read by no code and not in pkg/apis/pingcap/v1alpha1/unsupported "+
			"(act on each, or add it to the registry, which names it in the kind's Unsupported condition):\n  %s",
			len(unread), strings.Join(unread, "\n  "))
	}
}

// unreadFields returns the paths (Kind.spec.x.y) of the fields of api's
// kinds that the readers among pkgs do not read and registry (paths by
// kind) does not cover, sorted, and how many fields the readers read.
func unreadFields(t *testing.T, pkgs []*packages.Package, api, accessor string, registry map[string][]string) ([]string, int) {
	t.Helper()
	apiTypes := findPackage(t, pkgs, api).Types
	var accessors []*packages.Package
	if accessor != "" {
		accessors = append(accessors, findPackage(t, pkgs, accessor))
		// The component descriptors read each component's spec on the accessor's behalf,
		// in the Spec closures of their package-level declarations.
		if d := descriptorsPkg(pkgs, api); d != nil {
			accessors = append(accessors, d)
		}
	}
	read := readFields(readers(pkgs, api), accessors, isAccessor)
	var unread []string
	for kind, spec := range kindSpecs(apiTypes) {
		for _, f := range specFields(spec, "spec", api) {
			if !read[f.field.Origin()] && !unsupported.Covers(registry[kind], f.path) {
				unread = append(unread, kind+"."+f.path)
			}
		}
	}
	sort.Strings(unread)
	return unread, len(read)
}

// descriptorsPkg returns api's components package among pkgs, or nil.
func descriptorsPkg(pkgs []*packages.Package, api string) *packages.Package {
	for _, p := range pkgs {
		if p.PkgPath == api+"/components" {
			return p
		}
	}
	return nil
}

// readers are the packages of pkgs whose reads count: neither api nor one
// of notReaders.
func readers(pkgs []*packages.Package, api string) []*packages.Package {
	var out []*packages.Package
	for _, p := range pkgs {
		skip := p.PkgPath == api
		for _, prefix := range notReaders {
			if p.PkgPath == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(p.PkgPath, prefix) {
				skip = true
			}
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}

// TestTheCheckFailsForANewUnreadField runs the check on a kind of its own
// (testdata): a field no code reads, and one only written, are reported; a
// read one, one read through an inline struct, a registered one and one
// JSON skips are not.
func TestTheCheckFailsForANewUnreadField(t *testing.T) {
	pkgs := load(t, ".", "./testdata/api", "./testdata/reader")
	api := module + "/hack/fieldcheck/testdata/api"
	unread, _ := unreadFields(t, pkgs, api, "", map[string][]string{"Widget": {"spec.legacy"}})
	if want := []string{"Widget.spec.color", "Widget.spec.inner.width"}; !slices.Equal(unread, want) {
		t.Errorf("unread %v, want %v", unread, want)
	}
}
