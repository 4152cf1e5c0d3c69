package controller

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestUnknownFieldsReporterOncePerGeneration: one Warning per generation
// of an object with unknown fields, none without, and again after the
// fields went away and came back.
func TestUnknownFieldsReporterOncePerGeneration(t *testing.T) {
	t.Parallel()
	rec := record.NewFakeRecorder(10)
	r := NewUnknownFieldsReporter(rec)
	b := &v1alpha1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "u1", Generation: 1},
		UnknownFields: []string{"spec.affinity.nodeAfinity"}}
	steps := []struct {
		generation int64
		fields     []string
		wantEvent  bool
	}{
		{1, b.UnknownFields, true},
		{1, b.UnknownFields, false},
		{2, b.UnknownFields, true},
		{2, nil, false},
		{2, b.UnknownFields, true},
	}
	for i, s := range steps {
		obj := b.DeepCopy()
		obj.Generation, obj.UnknownFields = s.generation, s.fields
		msg := r.Report(obj)
		if (msg == "") != (len(s.fields) == 0) || (msg != "" && !strings.Contains(msg, "spec.affinity.nodeAfinity")) {
			t.Errorf("step %d: message %q", i, msg)
		}
		var got []string
		for len(rec.Events) > 0 {
			got = append(got, <-rec.Events)
		}
		if s.wantEvent != (len(got) == 1) || len(got) > 1 {
			t.Errorf("step %d: events %q, want one: %v", i, got, s.wantEvent)
		}
		if len(got) == 1 && !strings.HasPrefix(got[0], "Warning UnknownFields ") {
			t.Errorf("step %d: event %q", i, got[0])
		}
	}
}
