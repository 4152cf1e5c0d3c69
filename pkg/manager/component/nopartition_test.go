package component_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
)

// unpartitioned is PD without its lifecycle hooks, rolled out with a plain
// RollingUpdate (as Pump is).
type unpartitioned struct{ observedComponent }

func (unpartitioned) Traits() component.Traits { return component.Traits{NoPartition: true} }

func partitionOf(t *testing.T, sts *appsv1.StatefulSet) int32 {
	t.Helper()
	ru := sts.Spec.UpdateStrategy.RollingUpdate
	if sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType || ru == nil || ru.Partition == nil {
		t.Fatalf("update strategy %+v, want RollingUpdate with a partition", sts.Spec.UpdateStrategy)
	}
	return *ru.Partition
}

// TestNoPartitionLeavesTheRolloutToTheStatefulSet: a NoPartition component's
// StatefulSet is created, rendered and updated with partition 0 (a plain
// RollingUpdate, compared equal to what the API server defaults), a
// converged sync writes nothing, a new template is applied at once, and
// while the StatefulSet controller restarts the pods no partition is set.
func TestNoPartitionLeavesTheRolloutToTheStatefulSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture()
	healthyPD(f.pd)
	comp := unpartitioned{pd.New(f.env)}
	f.mgr = component.NewManager(comp, f.env)

	objs, err := component.Desired(newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate), comp)
	if err != nil {
		t.Fatal(err)
	}
	if sts := objs[len(objs)-1].(*appsv1.StatefulSet); partitionOf(t, sts) != 0 {
		t.Errorf("rendered partition %d, want 0", partitionOf(t, sts))
	}

	_ = f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	created, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(ctx, "basic-pd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := partitionOf(t, created); p != 0 || *created.Spec.Replicas != 3 {
		t.Errorf("created with partition %d and %d replicas, want 0 and 3", p, *created.Spec.Replicas)
	}

	f.seed(t)
	f.deps.FakeKube.ClearActions()
	if err := f.mgr.Sync(ctx, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatalf("converged sync: %v", err)
	}
	if w := writes(f.deps); len(w) != 0 {
		t.Errorf("converged sync wrote %v", w)
	}

	changed := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	changed.Spec.PD.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}})
	if err := f.mgr.Sync(ctx, changed); err != nil {
		t.Fatalf("sync with a new config: %v", err)
	}
	var updated *appsv1.StatefulSet
	for _, a := range writes(f.deps) {
		if a.GetVerb() == "update" && a.GetResource().Resource == "statefulsets" {
			updated = a.(k8stesting.UpdateAction).GetObject().(*appsv1.StatefulSet)
		}
	}
	if updated == nil || configVolume(updated) == configVolume(created) {
		t.Fatalf("want the new template applied at once, got %v", updated)
	}
	if p := partitionOf(t, updated); p != 0 {
		t.Errorf("updated with partition %d, want 0: the StatefulSet restarts the pods", p)
	}

	// The StatefulSet controller now restarts the pods on the new revision.
	f.seed(t)
	live, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
	if err != nil {
		t.Fatal(err)
	}
	live = live.DeepCopy()
	live.Status.UpdateRevision = "r2"
	mustAdd(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(live))
	f.deps.FakeKube.ClearActions()
	if err := f.mgr.Sync(ctx, changed); err != nil {
		t.Fatalf("sync during the rollout: %v", err)
	}
	if w := writes(f.deps); len(w) != 0 {
		t.Errorf("sync during the rollout wrote %v, want nothing (no partition to move)", w)
	}
	if changed.Status.PD.Phase != v1alpha1.UpgradePhase {
		t.Errorf("phase %s during the rollout, want Upgrade", changed.Status.PD.Phase)
	}
}
