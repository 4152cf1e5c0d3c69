package tidbcluster

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// blockingComponent records a blocker, then waits as a later gate would.
type blockingComponent struct{ *statefulStub }

func (b *blockingComponent) Sync(ctx context.Context, _ *v1alpha1.TidbCluster) error {
	flow.AddBlocker(ctx, "pod basic-pd-0 is not scheduled: Unschedulable: 0/1 nodes are available")
	return flow.Requeue("waiting for a PD quorum: 0 of 1 members healthy")
}

func TestWaitsNameWhatBlocksThePods(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	control := NewDefaultControl([]Component{&blockingComponent{newStatefulStub(t, "pd")}},
		NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	got, _ := syncOnce(t, deps, control, "basic")
	for _, typ := range []string{v1alpha1.TidbClusterProgressing, v1alpha1.TidbClusterReady} {
		c := meta.FindStatusCondition(got.Status.Conditions, typ)
		if c == nil || !strings.Contains(c.Message, "blocked by: pod basic-pd-0 is not scheduled: Unschedulable") {
			t.Errorf("%s = %+v, want the blocker named", typ, c)
		}
	}
}

// checkingComponent refuses its objects as the API server would.
type checkingComponent struct{ stubComponent }

func (c *checkingComponent) CheckObjects(*v1alpha1.TidbCluster) field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath("StatefulSet").Key("basic-tikv").Child("spec"), "x", "refused")}
}

// TestObjectsAreCheckedBeforeAnyWrite: an object the API server would
// refuse (built by a later component) stops the sync before the first
// component writes anything, as an invalid spec.
func TestObjectsAreCheckedBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := &stubComponent{name: "pd"}, &checkingComponent{stubComponent{name: "tikv"}}
	control := NewDefaultControl([]Component{first, second}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	got, err := syncOnce(t, deps, control, "basic")
	if !flow.IsIgnore(err) || first.runs != 0 || second.runs != 0 {
		t.Fatalf("want an invalid spec and no component run: err %v, runs %d/%d", err, first.runs, second.runs)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded); c == nil ||
		c.Reason != ReasonInvalidSpec || !strings.Contains(c.Message, "StatefulSet[basic-tikv].spec") {
		t.Fatalf("Degraded = %+v", c)
	}
}

// refusingComponent's write is refused by the API server as invalid.
type refusingComponent struct{ stubComponent }

func (c *refusingComponent) Sync(context.Context, *v1alpha1.TidbCluster) error {
	c.runs++
	return fmt.Errorf("create Deployment ns/basic-discovery: %w", apierrors.NewInvalid(
		schema.GroupKind{Group: "apps", Kind: "Deployment"}, "basic-discovery", field.ErrorList{field.Invalid(field.NewPath("spec"), "x", "bad")}))
}

// TestRefusedWriteIsAnInvalidSpec: a 422 the checks did not foresee ends
// the sync as an invalid spec (event, Degraded, not retried), never as an
// error retried for ever.
func TestRefusedWriteIsAnInvalidSpec(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	control := NewDefaultControl([]Component{&refusingComponent{stubComponent{name: "discovery"}}},
		NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	got, err := syncOnce(t, deps, control, "basic")
	if !flow.IsIgnore(err) {
		t.Fatalf("want an IgnoreError, got %v", err)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded); c == nil || c.Reason != ReasonInvalidSpec {
		t.Fatalf("Degraded = %+v", c)
	}
	if ev := <-deps.FakeRecorder.Events; !strings.HasPrefix(ev, "Warning FailedValidation") {
		t.Fatalf("event %q", ev)
	}
}

// countingChecker counts how often its objects are built and checked.
type countingChecker struct {
	stubComponent
	checks int
}

func (c *countingChecker) CheckObjects(*v1alpha1.TidbCluster) field.ErrorList {
	c.checks++
	return nil
}

// TestObjectsAreCheckedOncePerVersion: a resync of an unchanged cluster does
// not build and check its objects again; a changed one does.
func TestObjectsAreCheckedOncePerVersion(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	comp := &countingChecker{stubComponent: stubComponent{name: "pd"}}
	control := NewDefaultControl([]Component{comp}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	tc := newTC()
	tc.ResourceVersion = "7"
	for range 3 {
		_ = control.UpdateTidbCluster(context.Background(), tc.DeepCopy())
	}
	tc.ResourceVersion = "8"
	_ = control.UpdateTidbCluster(context.Background(), tc.DeepCopy())
	if comp.checks != 2 || comp.runs != 4 {
		t.Fatalf("checks %d, runs %d; want 2 checks (one per resourceVersion) over 4 syncs", comp.checks, comp.runs)
	}
}
