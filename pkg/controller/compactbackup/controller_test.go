package compactbackup

import (
	"context"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// TestControllerValidatesBeforeAnyWrite runs the controller's queue: an
// invalid CompactBackup gets Failed, Invalid and a FailedValidation
// Warning and no Job; a valid one is Scheduled.
func TestControllerValidatesBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		mutate    func(*v1alpha1.CompactBackup)
		wantState v1alpha1.CompactState
		wantEvent string
	}{
		{"invalid", func(cb *v1alpha1.CompactBackup) { cb.Spec.StartTs = "" }, v1alpha1.CompactFailed, "Warning FailedValidation"},
		{"valid", func(*v1alpha1.CompactBackup) {}, v1alpha1.CompactScheduled, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cb := compact()
			tc.mutate(cb)
			f := newFixture(t, cb, false)
			c, err := NewController(f.deps.Dependencies)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.deps.InformerFactory.Pingcap().V1alpha1().CompactBackups().Informer().GetIndexer().Add(f.stored(t)); err != nil {
				t.Fatal(err)
			}
			c.Worker().EnqueueKey("ns/cb")
			c.Worker().ProcessNextWorkItem(context.Background())
			st := f.stored(t).Status
			if st.State != tc.wantState || f.jobCount(t) != 0 || (tc.wantState == v1alpha1.CompactFailed) != (invalidMessage(f.stored(t)) != "") {
				t.Fatalf("state %q jobs %d conditions %+v, want %q and no Job", st.State, f.jobCount(t), st.Conditions, tc.wantState)
			}
			evs := f.events()
			if tc.wantEvent != "" && (len(evs) != 1 || !strings.HasPrefix(evs[0], tc.wantEvent)) {
				t.Fatalf("events %q, want %s", evs, tc.wantEvent)
			}
		})
	}
}
