// Package golden compares objects built by the member managers with YAML
// files under testdata/. Run `go test ./pkg/manager/... -update` to rewrite
// the files after an intended change, then review the diff.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// Assert serialises objs as a multi-document YAML file and compares it with
// testdata/<name>.golden.yaml, failing the test with a diff when they differ.
func Assert(t *testing.T, name string, objs ...any) {
	t.Helper()
	var buf bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatalf("marshal %T: %v", o, err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	path := filepath.Join("testdata", name+".golden.yaml")
	if *update {
		if err := os.MkdirAll("testdata", 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (run with -update to create it): %v", path, err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("%s differs (-want +got); run with -update if intended:\n%s", path, diff)
	}
}
