package component_test

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
)

// parallelScaleIn is PD in the skeleton with a scale-in step of two and a
// PreScaleIn that releases only the ordinals in done, recording the calls.
type parallelScaleIn struct {
	observedComponent
	done  map[int32]bool
	calls []int32
}

func (h *parallelScaleIn) ScaleInStep(*v1alpha1.TidbCluster) int32 { return 2 }

func (h *parallelScaleIn) PreScaleIn(_ context.Context, _ *v1alpha1.TidbCluster, ordinal int32) error {
	h.calls = append(h.calls, ordinal)
	if h.done[ordinal] {
		return nil
	}
	return flow.Requeue("ordinal %d still leaving", ordinal)
}

// scaleInFrom3To1 runs one sync of a converged 3-member component asked to
// go to 1, with the ordinals in done released by PreScaleIn.
func scaleInFrom3To1(t *testing.T, done map[int32]bool) (*fixture, *parallelScaleIn, error) {
	t.Helper()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	f.deps.FakeKube.ClearActions()
	hooks := &parallelScaleIn{observedComponent: pd.New(f.env), done: done}
	f.mgr = component.NewManager(hooks, f.env)
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.Spec.PD.Replicas = 1
	return f, hooks, f.mgr.Sync(context.Background(), tc)
}

func replicasWritten(t *testing.T, f *fixture) []int32 {
	t.Helper()
	var out []int32
	for _, a := range writes(f.deps) {
		if a.GetResource().Resource == "statefulsets" && a.GetVerb() == "update" {
			sts, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-pd", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, *sts.Spec.Replicas)
		}
	}
	return out
}

// With scaleInParallelism 2, both ordinals leaving are prepared in one sync
// and the StatefulSet shrinks past both at once.
func TestScaleInPreparesSeveralOrdinalsInOneSync(t *testing.T) {
	t.Parallel()
	f, hooks, err := scaleInFrom3To1(t, map[int32]bool{1: true, 2: true})
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if !slices.Equal(hooks.calls, []int32{2, 1}) {
		t.Errorf("PreScaleIn calls %v, want [2 1] (highest first, both in one sync)", hooks.calls)
	}
	if got := replicasWritten(t, f); !slices.Equal(got, []int32{1}) {
		t.Errorf("StatefulSet replicas written %v, want [1]", got)
	}
}

// Only released ordinals from the top down without a gap leave: ordinal 2
// released and 1 held shrinks to 2; ordinal 1 released under a held 2
// shrinks nothing and the sync waits.
func TestScaleInShrinksOnlyPastAReleasedTop(t *testing.T) {
	t.Parallel()
	f, _, err := scaleInFrom3To1(t, map[int32]bool{2: true})
	if err != nil {
		t.Fatalf("sync with the top ordinal released: %v", err)
	}
	if got := replicasWritten(t, f); !slices.Equal(got, []int32{2}) {
		t.Errorf("top released: StatefulSet replicas written %v, want [2]", got)
	}

	f, _, err = scaleInFrom3To1(t, map[int32]bool{1: true})
	if _, waits := flow.AsRequeue(err); !waits {
		t.Fatalf("sync with only ordinal 1 released: %v, want a wait", err)
	}
	if got := replicasWritten(t, f); len(got) != 0 {
		t.Errorf("ordinal 1 released under a held 2: StatefulSet replicas written %v, want none", got)
	}
}
