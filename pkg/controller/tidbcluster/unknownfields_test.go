package tidbcluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// TestUnknownFieldsDegradeAndWarnOncePerGeneration: the decoder's unknown
// fields turn Degraded True (reason UnknownFields, each path named) without
// stopping the sync, one Warning event names them per generation, and a
// spec without them is Degraded False again.
func TestUnknownFieldsDegradeAndWarnOncePerGeneration(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	ctx := context.Background()
	clusters := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns")
	if _, err := clusters.Create(ctx, newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pd := &stubComponent{name: "pd"}
	comps := []Component{pd}
	control := NewDefaultControl(comps, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	fields := []string{"spec.tikv.additionalContainers[0].imagePullPolcy", "spec.tikv.affinity.nodeAfinity"}
	// sync reads the stored object and gives it the list the decoder makes
	// of the stored JSON (the fake client stores typed objects, no JSON).
	sync := func(unknown []string, generation int64) (*v1alpha1.TidbCluster, []string) {
		t.Helper()
		tc, err := clusters.Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tc.Generation, tc.UnknownFields = generation, unknown
		if err := control.UpdateTidbCluster(ctx, tc); err != nil {
			t.Fatalf("sync: %v", err)
		}
		after, err := clusters.Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return after, drainEvents(deps)
	}

	got, events := sync(fields, 3)
	degraded := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded)
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != ReasonUnknownFields ||
		!strings.Contains(degraded.Message, strings.Join(fields, ", ")) {
		t.Fatalf("Degraded = %+v, want True/UnknownFields naming %v", degraded, fields)
	}
	if pd.runs != 1 {
		t.Errorf("components ran %d times, want 1: unknown fields must not stop the sync", pd.runs)
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning UnknownFields") || !strings.Contains(events[0], fields[1]) {
		t.Fatalf("events %q, want one Warning UnknownFields naming %s", events, fields[1])
	}
	if _, events = sync(fields, 3); len(events) != 0 {
		t.Errorf("a resync of the same generation repeated %q", events)
	}
	if _, events = sync(fields, 4); len(events) != 1 {
		t.Errorf("a new generation with the fields recorded %q, want one event", events)
	}
	got, events = sync(nil, 5)
	if d := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.TidbClusterDegraded); d == nil ||
		d.Status != metav1.ConditionFalse || len(events) != 0 {
		t.Errorf("without unknown fields: Degraded %+v, events %q; want False and none", d, events)
	}
}

// TestUnknownFieldsJoinASyncError: after a sync error Degraded keeps the
// error and names the unknown fields too.
func TestUnknownFieldsJoinASyncError(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	tc := newTC()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), tc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	failing := &stubComponent{name: "pd", err: errors.New("pd is down")}
	control := NewDefaultControl([]Component{failing}, NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	tc.UnknownFields = []string{"spec.pd.affinity.nodeAfinity"}
	if err := control.UpdateTidbCluster(context.Background(), tc); err == nil {
		t.Fatal("want the component's error")
	}
	d := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterDegraded)
	if d == nil || d.Reason != ReasonSyncError || !strings.Contains(d.Message, "pd is down") ||
		!strings.Contains(d.Message, "spec.pd.affinity.nodeAfinity") {
		t.Errorf("Degraded = %+v, want the sync error and the unknown field", d)
	}
}

// drainEvents returns the events recorded so far.
func drainEvents(deps *controller.FakeDependencies) []string {
	var out []string
	for {
		select {
		case ev := <-deps.FakeRecorder.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}
