package component_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// guardedPD is PD with a RolloutGuard that records, with PreUpgradePod,
// the order of the skeleton's calls; beginErr makes BeginRollout wait.
type guardedPD struct {
	*pd.Component
	calls    []string
	beginErr error
}

func (g *guardedPD) BeginRollout(_ context.Context, _ *v1alpha1.TidbCluster, pod *corev1.Pod, _ *appsv1.StatefulSet) error {
	g.calls = append(g.calls, "begin "+pod.Name)
	return g.beginErr
}

func (g *guardedPD) EndRollout(context.Context, *v1alpha1.TidbCluster) error {
	g.calls = append(g.calls, "end")
	return nil
}

func (g *guardedPD) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	g.calls = append(g.calls, "pre")
	return g.Component.PreUpgradePod(ctx, tc, ordinal)
}

// rolloutOnR2 is a converged PD whose StatefulSet now has update revision
// r2 (every pod still on r1), with pod notReady not Ready (-1: none).
func rolloutOnR2(t *testing.T, f *fixture, notReady int) {
	t.Helper()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	inf := f.deps.KubeInformerFactory
	sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
	if err != nil {
		t.Fatal(err)
	}
	sts = sts.DeepCopy()
	sts.Status.UpdateRevision = "r2"
	mustAdd(t, inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	if notReady >= 0 {
		pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-" + string(rune('0'+notReady)))
		if err != nil {
			t.Fatal(err)
		}
		pod = pod.DeepCopy()
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		mustAdd(t, inf.Core().V1().Pods().Informer().GetIndexer().Update(pod))
	}
	f.deps.FakeKube.ClearActions()
}

func stsPartition(t *testing.T, actions []k8stesting.Action) (int32, bool) {
	t.Helper()
	for _, a := range actions {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetResource().Resource == "statefulsets" {
			return *u.GetObject().(*appsv1.StatefulSet).Spec.UpdateStrategy.RollingUpdate.Partition, true
		}
	}
	return 0, false
}

// TestRolloutGuardRunsBeforeTheRestartAndCanHoldIt: BeginRollout comes
// before PreUpgradePod; while it waits nothing is written.
func TestRolloutGuardRunsBeforeTheRestartAndCanHoldIt(t *testing.T) {
	t.Parallel()
	f := newFixture()
	rolloutOnR2(t, f, -1)
	g := &guardedPD{Component: pd.New(f.env), beginErr: flow.Requeue("DDL pause not confirmed")}
	f.mgr = component.NewManager(g, f.env)
	err := f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	if re, waiting := flow.AsRequeue(err); !waiting || !strings.Contains(re.Reason, "DDL pause") {
		t.Fatalf("sync = %v, want the guard's wait", err)
	}
	if w := writes(f.deps); len(w) != 0 || strings.Join(g.calls, ",") != "begin basic-pd-2" {
		t.Fatalf("while the guard waits: writes %v, calls %v; want none and only begin", w, g.calls)
	}
	g.beginErr, g.calls = nil, nil
	if err := f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(g.calls, ",") != "begin basic-pd-2,pre" {
		t.Errorf("calls %v, want begin before pre", g.calls)
	}
	if p, ok := stsPartition(t, writes(f.deps)); !ok || p != 2 {
		t.Errorf("partition %d (written %v), want 2", p, ok)
	}
}

// TestForceUpgradeLeavesAnAnsweringPDToItsOwnRule: PD keeps the TiDB
// Operator's force rule (only while PD cannot answer), so a rollout held
// by an old PD pod that is down waits, with or without force-upgrade, runs
// no preparation and writes nothing: restarting the healthy members of a PD
// that still has a quorum could break it.
func TestForceUpgradeLeavesAnAnsweringPDToItsOwnRule(t *testing.T) {
	t.Parallel()
	for _, force := range []bool{false, true} {
		f := newFixture()
		rolloutOnR2(t, f, 0)
		g := &guardedPD{Component: pd.New(f.env)}
		f.mgr = component.NewManager(g, f.env)
		tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
		if force {
			tc.Annotations = map[string]string{label.AnnForceUpgradeKey: "true"}
		}
		err := f.mgr.Sync(context.Background(), tc)
		_, written := stsPartition(t, writes(f.deps))
		if _, waiting := flow.AsRequeue(err); !waiting || written {
			t.Errorf("force %v: sync %v, StatefulSet written %v; want a wait and no write", force, err, written)
		}
		if len(g.calls) != 0 || len(f.pd.ClusterClient("ns", "basic").WriteCalls()) != 0 {
			t.Errorf("force %v: a waiting rollout ran preparation: calls %v, PD writes %v", force, g.calls, f.pd.ClusterClient("ns", "basic").WriteCalls())
		}
	}
}

// TestForceUpgradeFixesAComponentDownOnItsOldTemplate: every pod is down
// and a new template (the fix) is not applied yet, so the StatefulSet's
// revision still names the old one; with force-upgrade the sync applies
// the fix with partition 0, without it the rollout waits and writes nothing.
func TestForceUpgradeFixesAComponentDownOnItsOldTemplate(t *testing.T) {
	t.Parallel()
	for _, force := range []bool{false, true} {
		f := newFixture()
		healthyPD(f.pd)
		_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
		f.seed(t)
		for o := 0; o < 3; o++ {
			pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-" + string(rune('0'+o)))
			if err != nil {
				t.Fatal(err)
			}
			pod = pod.DeepCopy()
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			mustAdd(t, f.deps.KubeInformerFactory.Core().V1().Pods().Informer().GetIndexer().Update(pod))
		}
		f.deps.FakeKube.ClearActions()
		tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
		tc.Spec.PD.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}}) // the fix
		if force {
			tc.Annotations = map[string]string{label.AnnForceUpgradeKey: "true"}
		}
		// Every member down: PD does not answer, which is when PD's own
		// force rule (spec §6.1) acts.
		f.pd.ClusterClient("ns", "basic").SetError(pdapi.MethodGetHealth, errors.New("connection refused"))
		f.pd.ClusterClient("ns", "basic").SetError(pdapi.MethodGetMembers, errors.New("connection refused"))
		err := f.mgr.Sync(context.Background(), tc)
		p, written := stsPartition(t, writes(f.deps))
		if !force {
			if written {
				t.Errorf("without force: sync %v, StatefulSet written; want no write", err)
			}
			continue
		}
		if !written || p != 0 {
			t.Errorf("with force: sync %v, partition %d written %v; want the fix applied with partition 0", err, p, written)
		}
	}
}
