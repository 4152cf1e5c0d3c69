package tidbngmonitoring

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/workload"
	"github.com/kubetidb/tidb-operator/pkg/ngmonitoring"
)

type fixture struct {
	t    *testing.T
	deps *controller.FakeDependencies
	c    *Controller
}

func newFixture(t *testing.T, tngm *v1alpha1.TidbNGMonitoring, withCluster bool) *fixture {
	t.Helper()
	deps := controller.NewFakeDependencies()
	c, err := NewController(deps.Dependencies)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, deps: deps, c: c}
	pc := deps.InformerFactory.Pingcap().V1alpha1()
	f.check(pc.TidbNGMonitorings().Informer().GetIndexer().Add(tngm))
	f.check(deps.FakePingcap.Tracker().Add(tngm.DeepCopy()))
	if withCluster {
		f.check(pc.TidbClusters().Informer().GetIndexer().Add(&v1alpha1.TidbCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}))
	}
	return f
}

func (f *fixture) check(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func newNGM() *v1alpha1.TidbNGMonitoring {
	return &v1alpha1.TidbNGMonitoring{
		ObjectMeta: metav1.ObjectMeta{Name: "ngm", Namespace: "ns", UID: "ngm-uid", Generation: 1},
		Spec: v1alpha1.TidbNGMonitoringSpec{
			Clusters: []v1alpha1.TidbClusterRef{{Name: "basic"}},
			NGMonitoring: v1alpha1.NGMonitoringSpec{
				Config: v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}}),
			},
		},
	}
}

func (f *fixture) status() v1alpha1.TidbNGMonitoringStatus {
	got, err := f.deps.Clientset.PingcapV1alpha1().TidbNGMonitorings("ns").Get(context.Background(), "ngm", metav1.GetOptions{})
	f.check(err)
	return got.Status
}

// TestCreatesServiceConfigMapAndStatefulSet: one sync writes the headless
// Service, the ConfigMap (user's key kept, operator's PD endpoints) and the
// StatefulSet, and reports synced in status.ngMonitoring.
func TestCreatesServiceConfigMapAndStatefulSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newNGM(), true)
	f.check(f.c.Sync(context.Background(), "ns/ngm"))
	ctx := context.Background()
	name := ngmonitoring.ObjectName("ngm")
	if _, err := f.deps.KubeClient.CoreV1().Services("ns").Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("Service: %v", err)
	}
	cm, err := f.deps.KubeClient.CoreV1().ConfigMaps("ns").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := cm.Data["config-file"]; !strings.Contains(cfg, "level = 'warn'") || !strings.Contains(cfg, "basic-pd.ns:2379") {
		t.Errorf("config:\n%s", cfg)
	}
	if _, err := f.deps.KubeClient.AppsV1().StatefulSets("ns").Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("StatefulSet: %v", err)
	}
	if st := f.status(); !st.NGMonitoring.Synced || st.ObservedGeneration != 1 {
		t.Errorf("status %+v", st)
	}
}

// TestPausedWritesNothingButStatus: a paused TidbNGMonitoring is observed
// (Ready reason Paused) and nothing else is written.
func TestPausedWritesNothingButStatus(t *testing.T) {
	t.Parallel()
	tngm := newNGM()
	tngm.Spec.Paused = true
	f := newFixture(t, tngm, true)
	f.check(f.c.Sync(context.Background(), "ns/ngm"))
	if n := len(f.deps.FakeKube.Actions()); n != 0 {
		t.Errorf("paused wrote %v", f.deps.FakeKube.Actions())
	}
	if c := meta.FindStatusCondition(f.status().Conditions, workload.ConditionReady); c == nil || c.Reason != workload.ReasonPaused {
		t.Errorf("Ready = %+v", c)
	}
}

// TestMissingCluster: Ready False ClusterNotFound, a Warning naming the
// cluster, and the cluster's events reach this TidbNGMonitoring.
func TestMissingCluster(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newNGM(), false)
	f.check(f.c.Sync(context.Background(), "ns/ngm"))
	if c := meta.FindStatusCondition(f.status().Conditions, workload.ConditionReady); c == nil || c.Reason != workload.ReasonClusterNotFound {
		t.Errorf("Ready = %+v", c)
	}
	if e := <-f.deps.FakeRecorder.Events; !strings.Contains(e, "Warning ClusterNotFound TidbCluster ns/basic not found") {
		t.Errorf("event %q", e)
	}
	if keys := f.c.Dependents("ns", "basic"); len(keys) != 1 || keys[0] != "ns/ngm" {
		t.Errorf("dependents %v", keys)
	}
}

// TestRollingUpdateConfigChangeRollsThePod: under RollingUpdate a config
// change changes the pod template; under InPlace it does not.
func TestRollingUpdateConfigChangeRollsThePod(t *testing.T) {
	t.Parallel()
	tc := &v1alpha1.TidbCluster{ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns"}}
	for _, strategy := range []v1alpha1.ConfigUpdateStrategy{v1alpha1.ConfigUpdateStrategyRollingUpdate, v1alpha1.ConfigUpdateStrategyInPlace} {
		a, b := newNGM(), newNGM()
		a.Spec.ConfigUpdateStrategy, b.Spec.ConfigUpdateStrategy = &strategy, &strategy
		b.Spec.NGMonitoring.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "debug"}})
		da, err := build(a, tc)
		f := &fixture{t: t}
		f.check(err)
		db, err := build(b, tc)
		f.check(err)
		changed := da.StatefulSet.Spec.Template.Annotations[ngmonitoring.AnnConfigHash] != db.StatefulSet.Spec.Template.Annotations[ngmonitoring.AnnConfigHash]
		if want := strategy == v1alpha1.ConfigUpdateStrategyRollingUpdate; changed != want {
			t.Errorf("%s: pod template changed = %t, want %t", strategy, changed, want)
		}
	}
}
