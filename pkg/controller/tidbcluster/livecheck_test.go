package tidbcluster

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// liveCheckingComponent finds the spec changed a field its live objects
// were built from, as validation.ValidateLive would; it counts its checks.
type liveCheckingComponent struct {
	stubComponent
	checks int
}

func (c *liveCheckingComponent) CheckLive(context.Context, *v1alpha1.TidbCluster) field.ErrorList {
	c.checks++
	return field.ErrorList{field.Invalid(field.NewPath("spec", "tidb", "bootstrapSQLConfigMapName"), "other-sql", "may not be changed once set")}
}

// TestRefusedChangeStopsTheSyncBeforeAnyWrite: an update rule broken
// against the live objects of a later component stops the sync before the
// first component runs (nothing half applied), with a Warning event and
// Degraded; the next sync checks the live objects again, although the
// cluster did not change, because the live objects may have.
func TestRefusedChangeStopsTheSyncBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := &stubComponent{name: "pd"}, &liveCheckingComponent{stubComponent: stubComponent{name: "tidb"}}
	control := NewDefaultControl([]Component{first, second}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	got, err := syncOnce(t, deps, control, "basic")
	if !flow.IsIgnore(err) || first.runs != 0 || second.runs != 0 {
		t.Fatalf("want a refused change and no component run: err %v, runs %d/%d", err, first.runs, second.runs)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded); c == nil ||
		c.Reason != ReasonInvalidSpec || !strings.Contains(c.Message, "spec.tidb.bootstrapSQLConfigMapName") {
		t.Fatalf("Degraded = %+v", c)
	}
	if ev := <-deps.FakeRecorder.Events; !strings.HasPrefix(ev, "Warning FailedValidation") || !strings.Contains(ev, "may not be changed once set") {
		t.Fatalf("event %q", ev)
	}
	if _, err := syncOnce(t, deps, control, "basic"); !flow.IsIgnore(err) || second.checks != 2 {
		t.Fatalf("second sync: err %v, checks %d, want the live objects checked again", err, second.checks)
	}
}
