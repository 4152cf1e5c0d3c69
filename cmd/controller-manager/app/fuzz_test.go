package app

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
)

// FuzzRender runs `render -f file` (renderMain) on mutated YAML: the
// examples as written, and example and corpus objects converted to JSON
// (which is YAML) and poked by corpus.Poke. It asserts that render never
// panics and exits 0 (rendered) or 1 (a readable error), never 2 or other.
func FuzzRender(f *testing.F) {
	docs, err := corpus.YAMLSeeds()
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range docs {
		f.Add(d, uint16(0), "", int64(0))
	}
	seeds, err := corpus.Seeds("TidbCluster")
	if err != nil {
		f.Fatal(err)
	}
	for i, d := range seeds {
		f.Add(d, uint16(0), "", int64(0))
		f.Add(d, uint16(i)*31+97, "x y", int64(1)<<40)
	}
	f.Add([]byte("kind: TidbCluster\nmetadata: {name: x}\nspec: {pd: {replicas: 1, requests: {storage: 1Gi}, config: 'a = nan'}}\n"), uint16(0), "", int64(0))
	f.Add([]byte("kind: TidbCluster\n---\nkind: TidbCluster\nspec: [\n"), uint16(0), "", int64(0))
	path := filepath.Join(f.TempDir(), "tc.yaml")
	f.Fuzz(func(t *testing.T, doc []byte, sel uint16, s string, n int64) {
		if sel != 0 {
			if j, err := yaml.YAMLToJSON(doc); err == nil {
				doc = corpus.Poke(j, sel, s, n)
			}
		}
		if err := os.WriteFile(path, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		if code := renderMain([]string{"-f", path}, io.Discard, io.Discard); code != 0 && code != 1 {
			t.Fatalf("render exited %d", code)
		}
	})
}
