package monitor

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesBuild builds every TidbMonitor example of examples/ (parsed
// strictly) and checks that none uses a field the operator does not act on.
func TestExamplesBuild(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "tidb-monitor.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("monitor examples: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tm := parseMonitor(t, string(b))
		var targets []Target
		for _, ref := range tm.Spec.Clusters {
			targets = append(targets, TargetOf(ref, tm.Namespace, nil))
		}
		objects(t, tm, targets)
		if u := Unsupported(tm); len(u) != 0 {
			t.Errorf("%s uses what is not acted on: %v", f, u)
		}
	}
}
