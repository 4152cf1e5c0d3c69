package component_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
)

// observedComponent is the part of a component that is not a lifecycle hook.
type observedComponent interface {
	component.Component[*v1alpha1.TidbCluster]
	component.Observer[*v1alpha1.TidbCluster]
}

// recordingHooks is a component whose only lifecycle hooks record the
// post-upgrade calls of the skeleton; every other hook is absent, so the
// skeleton's defaults apply.
type recordingHooks struct {
	observedComponent
	post   []int32
	ends   int
	endErr error
}

func (h *recordingHooks) PostUpgradePod(_ context.Context, _ *v1alpha1.TidbCluster, ordinal int32) error {
	h.post = append(h.post, ordinal)
	return nil
}

func (h *recordingHooks) EndUpgrade(context.Context, *v1alpha1.TidbCluster) error {
	h.ends++
	return h.endErr
}

// endOfRollout returns a converged PD whose last written status still says
// Upgrade (the sync that ends a rollout) and whose pod 2 is not Ready.
func endOfRollout(t *testing.T, hooks *recordingHooks) (*fixture, *v1alpha1.TidbCluster) {
	t.Helper()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-2")
	if err != nil {
		t.Fatal(err)
	}
	pod = pod.DeepCopy()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
	hooks.observedComponent = pd.New(f.env)
	f.mgr = component.NewManager(hooks, f.env)
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.Status.PD.Phase = v1alpha1.UpgradePhase
	return f, tc
}

func TestRolloutEndSweepsAlsoForUnavailablePods(t *testing.T) {
	t.Parallel()
	hooks := &recordingHooks{}
	f, tc := endOfRollout(t, hooks)
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatalf("sync ending the rollout: %v", err)
	}
	if hooks.ends != 1 {
		t.Errorf("EndUpgrade called %d times, want 1", hooks.ends)
	}
	for _, o := range hooks.post {
		if o == 2 {
			t.Errorf("PostUpgradePod called for the unavailable pod 2: %v", hooks.post)
		}
	}
	if len(hooks.post) != 2 {
		t.Errorf("PostUpgradePod for the available pods: got %v, want 0 and 1", hooks.post)
	}
	if tc.Status.PD.Phase != v1alpha1.NormalPhase {
		t.Errorf("phase %s after the rollout ended, want Normal", tc.Status.PD.Phase)
	}

	// The next sync starts from Normal: nothing to sweep.
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if hooks.ends != 1 {
		t.Errorf("EndUpgrade called again after the phase became Normal: %d", hooks.ends)
	}
}

func TestRolloutEndKeepsUpgradeUntilTheSweepSucceeds(t *testing.T) {
	t.Parallel()
	hooks := &recordingHooks{endErr: errors.New("PD unreachable")}
	f, tc := endOfRollout(t, hooks)
	if err := f.mgr.Sync(context.Background(), tc); err == nil {
		t.Fatal("a failed sweep must fail the sync")
	}
	if tc.Status.PD.Phase != v1alpha1.UpgradePhase {
		t.Fatalf("phase %s, want Upgrade so the next sync sweeps again", tc.Status.PD.Phase)
	}
	hooks.endErr = nil
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatal(err)
	}
	if hooks.ends != 2 || tc.Status.PD.Phase != v1alpha1.NormalPhase {
		t.Errorf("after the retry: %d sweeps, phase %s; want 2, Normal", hooks.ends, tc.Status.PD.Phase)
	}
}
