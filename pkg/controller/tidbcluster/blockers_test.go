package tidbcluster

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// blockingComponent records a blocker, then waits as a later gate would.
type blockingComponent struct{ stubComponent }

func (b *blockingComponent) Sync(ctx context.Context, _ *v1alpha1.TidbCluster) error {
	controller.AddBlocker(ctx, "pod basic-pd-0 is not scheduled: Unschedulable: 0/1 nodes are available")
	return controller.Requeue("waiting for a PD quorum: 0 of 1 members healthy")
}

func TestWaitsNameWhatBlocksThePods(t *testing.T) {
	t.Parallel()
	deps := controller.NewFakeDependencies()
	if _, err := deps.FakePingcap.PingcapV1alpha1().TidbClusters("ns").Create(context.Background(), newTC(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	control := NewDefaultControl([]Component{&blockingComponent{stubComponent{name: "pd"}}},
		NewStatusUpdater(deps.FakePingcap), deps.FakeRecorder, deps.Metrics, nil)
	got, _ := syncOnce(t, deps, control, "basic")
	for _, typ := range []string{v1alpha1.TidbClusterProgressing, v1alpha1.TidbClusterReady} {
		c := meta.FindStatusCondition(got.Status.Conditions, typ)
		if c == nil || !strings.Contains(c.Message, "blocked by: pod basic-pd-0 is not scheduled: Unschedulable") {
			t.Errorf("%s = %+v, want the blocker named", typ, c)
		}
	}
}
