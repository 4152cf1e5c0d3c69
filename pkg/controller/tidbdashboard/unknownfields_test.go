package tidbdashboard

import (
	"strings"
	"testing"
)

// TestUnknownFieldsWarnOncePerGeneration: the shared workload shell names
// the decoder's unknown fields in one Warning per generation; the sync goes
// on as without them.
func TestUnknownFieldsWarnOncePerGeneration(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	td := newDashboard()
	td.UnknownFields = []string{"spec.additionalContainers[0].imagePullPolcy"}
	f.seed(td)
	_ = f.sync() // the cluster is missing: a wait, reported by its own Warning
	var named []string
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning UnknownFields ") {
			named = append(named, e)
		}
	}
	if len(named) != 1 || !strings.Contains(named[0], td.UnknownFields[0]) {
		t.Fatalf("UnknownFields events %q, want one naming %s", named, td.UnknownFields[0])
	}
	_ = f.sync()
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning UnknownFields ") {
			t.Errorf("repeated in the same generation: %q", e)
		}
	}
}
