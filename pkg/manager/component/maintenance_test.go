package component_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
)

// maintainer is a component whose one hook records the pods the skeleton
// hands to MaintainPods and fails with err.
type maintainer struct {
	observedComponent
	seen []string
	err  error
}

func (m *maintainer) MaintainPods(_ context.Context, _ *v1alpha1.TidbCluster, pods map[int32]*corev1.Pod) error {
	m.seen = m.seen[:0]
	for o, p := range pods {
		if !strings.HasSuffix(p.Name, string(rune('0'+o))) {
			m.seen = append(m.seen, "ordinal mismatch: "+p.Name)
		}
		m.seen = append(m.seen, p.Name)
	}
	sort.Strings(m.seen)
	return m.err
}

func TestMaintenanceGetsThePodsAndItsErrorFailsTheSync(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	m := &maintainer{observedComponent: pd.New(f.env)}
	mgr := component.NewManager(m, f.env)
	if err := mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.seen, ","); got != "basic-pd-0,basic-pd-1,basic-pd-2" {
		t.Errorf("MaintainPods saw %q, want the three PD pods by ordinal", got)
	}
	m.err = errors.New("PD unreachable")
	err := mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	if err == nil || !strings.Contains(err.Error(), "PD unreachable") {
		t.Errorf("sync error %v, want the maintenance error wrapped", err)
	}
}

// midRollout is a converged PD mid-rollout: the StatefulSet's partition is
// 2, pod 2 runs the update revision and has been Ready for 10 s.
func midRollout(t *testing.T) (*fixture, *v1alpha1.TidbCluster) {
	t.Helper()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	inf := f.deps.KubeInformerFactory
	sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
	if err != nil {
		t.Fatal(err)
	}
	sts = sts.DeepCopy()
	two := int32(2)
	sts.Spec.UpdateStrategy.RollingUpdate.Partition = &two
	sts.Status.UpdateRevision, sts.Status.UpdatedReplicas = "r2", 1
	mustAdd(t, inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	pod, err := f.deps.PodLister.Pods("ns").Get("basic-pd-2")
	if err != nil {
		t.Fatal(err)
	}
	pod = pod.DeepCopy()
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = "r2"
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(f.deps.FakeClock.Now().Add(-10 * time.Second))}}
	mustAdd(t, inf.Core().V1().Pods().Informer().GetIndexer().Update(pod))
	return f, newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
}

func TestMinReadySecondsHoldsTheNextRestart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		minReady  string
		wantWait  bool
		partition int32
	}{
		{"60", true, 2}, // Ready for 10 s of 60: the next pod waits
		{"5", false, 1}, // Ready long enough: pod 1 restarts
		{"", false, 1},  // no annotation: no wait
		{"x", false, 1}, // unreadable: no wait rather than a rollout stuck for good
	} {
		t.Run("min-ready="+tt.minReady, func(t *testing.T) {
			t.Parallel()
			f, tc := midRollout(t)
			if tt.minReady != "" {
				tc.Annotations = map[string]string{label.MinReadySecondsAnnotation("pd"): tt.minReady}
			}
			err := f.mgr.Sync(context.Background(), tc)
			re, waiting := flow.AsRequeue(err)
			if waiting != tt.wantWait || (!waiting && err != nil) {
				t.Fatalf("sync = %v, want waiting=%v", err, tt.wantWait)
			}
			if waiting && !strings.Contains(re.Reason, "ordinal 2") {
				t.Errorf("wait reason %q does not name pod 2", re.Reason)
			}
			sts, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-pd", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.wantWait {
				if p := *sts.Spec.UpdateStrategy.RollingUpdate.Partition; p != tt.partition {
					t.Errorf("partition %d, want %d", p, tt.partition)
				}
			}
		})
	}
}

func TestMinReadySecondsIsPerComponent(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"tidb.pingcap.com/tikv-min-ready-seconds": "30", "tidb.pingcap.com/ticdc-min-ready-seconds": "30",
		"tidb.pingcap.com/tidb-min-ready-seconds": "-3"}}}
	for comp, want := range map[string]time.Duration{"tikv": 30 * time.Second, "pd": 0, "ticdc": 0, "tidb": 0} {
		if got := component.MinReadySeconds(tc, comp); got != want {
			t.Errorf("MinReadySeconds(%s) = %v, want %v", comp, got, want)
		}
	}
}
