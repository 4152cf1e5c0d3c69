package component_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	_ "github.com/kubetidb/tidb-operator/pkg/manager/golden" // registers -update for go test ./pkg/manager/...
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

type fixture struct {
	deps *controller.FakeDependencies
	env  *component.Env
	pd   *pdapi.FakeControl
	mgr  *component.Manager[*v1alpha1.TidbCluster]
}

// newFixture runs PD in the skeleton over fake dependencies and a fake PD,
// with failover off.
func newFixture() *fixture {
	deps := controller.NewFakeDependencies()
	fc := pdapi.NewFakeControl()
	env := newEnv(deps, fc)
	return &fixture{deps: deps, env: env, pd: fc, mgr: component.NewManager(pd.New(env), env)}
}

// newEnv is the members' Env over deps, reaching PD through fc, with
// failover off.
func newEnv(deps *controller.FakeDependencies, fc *pdapi.FakeControl) *component.Env {
	env := controller.NewEnv(deps.Dependencies)
	env.PD = fc
	env.AutoFailover = false
	return env
}

func newTC(strategy v1alpha1.ConfigUpdateStrategy) *v1alpha1.TidbCluster {
	tc := &v1alpha1.TidbCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "tc-uid"},
		Spec: v1alpha1.TidbClusterSpec{
			Version:              "v8.5.0",
			ConfigUpdateStrategy: strategy,
			PD: &v1alpha1.PDSpec{Replicas: 3,
				ResourceRequirements: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				Config:               v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "info"}})},
		},
	}
	defaulting.SetTidbClusterDefaults(tc)
	return tc
}

// seed copies every object the fake API holds into the informer indexers,
// as the informers would after the writes, and marks the StatefulSets
// rolled out and their pods Ready.
func (f *fixture) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	kube := f.deps.KubeClient
	inf := f.deps.KubeInformerFactory
	svcs, _ := kube.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		mustAdd(t, inf.Core().V1().Services().Informer().GetIndexer().Update(&svcs.Items[i]))
	}
	cms, _ := kube.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
	for i := range cms.Items {
		mustAdd(t, inf.Core().V1().ConfigMaps().Informer().GetIndexer().Update(&cms.Items[i]))
	}
	sets, _ := kube.AppsV1().StatefulSets("ns").List(ctx, metav1.ListOptions{})
	for i := range sets.Items {
		s := sets.Items[i].DeepCopy()
		s.Status = appsv1.StatefulSetStatus{Replicas: *s.Spec.Replicas, ReadyReplicas: *s.Spec.Replicas,
			CurrentRevision: "r1", UpdateRevision: "r1", ObservedGeneration: s.Generation}
		mustAdd(t, inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(s))
		for o := int32(0); o < *s.Spec.Replicas; o++ {
			labels := map[string]string{appsv1.ControllerRevisionHashLabelKey: "r1"}
			for k, v := range s.Spec.Template.Labels {
				labels[k] = v
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", s.Name, o), Namespace: "ns", Labels: labels},
				Status:     corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
			}
			mustAdd(t, inf.Core().V1().Pods().Informer().GetIndexer().Update(pod))
		}
	}
}

func mustAdd(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writes(deps *controller.FakeDependencies) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range deps.FakeKube.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a)
		}
	}
	return out
}

func healthyPD(fc *pdapi.FakeControl) {
	c := fc.ClusterClient("ns", "basic")
	var health pdapi.HealthInfo
	for _, n := range []string{"basic-pd-0", "basic-pd-1", "basic-pd-2"} {
		health = append(health, pdapi.MemberHealth{Name: n, MemberID: 1, Health: true,
			ClientUrls: []string{"http://" + n + ".basic-pd-peer.ns.svc:2379"}})
	}
	c.SetHealth(health)
	c.SetMembers("basic-pd-0", &pdapi.Member{Name: "basic-pd-0", MemberID: 1})
	c.SetCluster(pdapi.Cluster{ID: 42})
}

func TestFirstSyncCreatesObjectsThenWaits(t *testing.T) {
	t.Parallel()
	f := newFixture()
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	err := f.mgr.Sync(context.Background(), tc)
	re, waiting := flow.AsRequeue(err)
	if !waiting || !strings.Contains(re.Reason, "created StatefulSet basic-pd") {
		t.Fatalf("want a wait after creating the StatefulSet, got %v", err)
	}
	created := map[string]bool{}
	for _, a := range writes(f.deps) {
		if a.GetVerb() != "create" {
			t.Errorf("unexpected %s", a.GetVerb())
			continue
		}
		obj := a.(k8stesting.CreateAction).GetObject().(metav1.Object)
		created[a.GetResource().Resource+"/"+obj.GetName()] = true
		ref := metav1.GetControllerOf(obj)
		if ref == nil || ref.Kind != "TidbCluster" || ref.UID != "tc-uid" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("%s has owner %+v", obj.GetName(), ref)
		}
		if obj.GetLabels()["app.kubernetes.io/component"] != "pd" || obj.GetLabels()["app.kubernetes.io/instance"] != "basic" {
			t.Errorf("%s labels %v", obj.GetName(), obj.GetLabels())
		}
	}
	for _, want := range []string{"services/basic-pd", "services/basic-pd-peer", "statefulsets/basic-pd"} {
		if !created[want] {
			t.Errorf("%s not created; created %v", want, created)
		}
	}
	cmCreated := false
	for k := range created {
		cmCreated = cmCreated || strings.HasPrefix(k, "configmaps/basic-pd-")
	}
	if !cmCreated {
		t.Errorf("no hashed ConfigMap created: %v", created)
	}
	if tc.Status.PD.Synced {
		t.Error("PD cannot be synced before its StatefulSet exists")
	}
}

func TestConvergedSyncMakesNoWrite(t *testing.T) {
	t.Parallel()
	for _, strategy := range []v1alpha1.ConfigUpdateStrategy{v1alpha1.ConfigUpdateStrategyRollingUpdate, v1alpha1.ConfigUpdateStrategyInPlace} {
		t.Run(string(strategy), func(t *testing.T) {
			t.Parallel()
			f := newFixture()
			healthyPD(f.pd)
			_ = f.mgr.Sync(context.Background(), newTC(strategy))
			f.seed(t)
			f.deps.FakeKube.ClearActions()
			tc := newTC(strategy)
			if err := f.mgr.Sync(context.Background(), tc); err != nil {
				t.Fatalf("converged sync: %v", err)
			}
			if w := writes(f.deps); len(w) != 0 {
				t.Fatalf("converged sync wrote %d times: %v", len(w), w)
			}
			if got := f.pd.ClusterClient("ns", "basic").WriteCalls(); len(got) != 0 {
				t.Fatalf("converged sync wrote to PD: %v", got)
			}
			if !tc.Status.PD.Synced || len(tc.Status.PD.Members) != 3 || tc.Status.ClusterID != "42" {
				t.Fatalf("status not observed: %+v clusterID=%s", tc.Status.PD, tc.Status.ClusterID)
			}
			if tc.Status.PD.Phase != v1alpha1.NormalPhase {
				t.Errorf("phase %s", tc.Status.PD.Phase)
			}
		})
	}
}

func TestConfigChangeRollingUpdateNewConfigMapNoPodRolled(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	f.deps.FakeKube.ClearActions()
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	tc.Spec.PD.Config = v1alpha1.NewConfig(map[string]any{"log": map[string]any{"level": "warn"}})
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatalf("sync: %v", err)
	}
	var newCM string
	var sts *appsv1.StatefulSet
	for _, a := range writes(f.deps) {
		switch {
		case a.GetVerb() == "create" && a.GetResource().Resource == "configmaps":
			newCM = a.(k8stesting.CreateAction).GetObject().(*corev1.ConfigMap).Name
		case a.GetVerb() == "update" && a.GetResource().Resource == "statefulsets":
			sts = a.(k8stesting.UpdateAction).GetObject().(*appsv1.StatefulSet)
		default:
			t.Errorf("unexpected %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
	if newCM == "" || sts == nil {
		t.Fatalf("want a new ConfigMap and a StatefulSet update; cm=%q sts=%v", newCM, sts != nil)
	}
	if got := configVolume(sts); got != newCM {
		t.Errorf("template mounts %q, want %q", got, newCM)
	}
	if p := sts.Spec.UpdateStrategy.RollingUpdate.Partition; p == nil || *p != 3 {
		t.Errorf("partition %v: applying a template must not restart pods by itself", p)
	}
	if tc.Status.PD.Phase != v1alpha1.UpgradePhase {
		t.Errorf("phase %s: the sync that applies a new template starts a rollout (Upgrade)", tc.Status.PD.Phase)
	}
}

func TestReformattedConfigKeepsConfigMapName(t *testing.T) {
	t.Parallel()
	a := map[string]string{component.ConfigFileKey: "[log]\nlevel = 'info'\n", component.StartScriptKey: "x"}
	b := map[string]string{component.ConfigFileKey: "[log]\n  level = \"info\"", component.StartScriptKey: "x"}
	if !component.EqualConfigData(a, b) {
		t.Error("semantically equal TOML must compare equal")
	}
	b[component.StartScriptKey] = "y"
	if component.EqualConfigData(a, b) {
		t.Error("start scripts compare byte for byte")
	}
}

func TestPausedClusterObservesButWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture()
	tc := newTC(v1alpha1.ConfigUpdateStrategyInPlace)
	tc.Spec.Paused = true
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatalf("paused sync: %v", err)
	}
	if w := writes(f.deps); len(w) != 0 {
		t.Fatalf("paused cluster got writes: %v", w)
	}
}

func configVolume(sts *appsv1.StatefulSet) string {
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == component.ConfigVolumeName && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

func TestRecentMembersAreReusedOnlyWhileTheStatefulSetHolds(t *testing.T) {
	t.Parallel()
	f := newFixture()
	healthyPD(f.pd)
	_ = f.mgr.Sync(context.Background(), newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate))
	f.seed(t)
	tc := newTC(v1alpha1.ConfigUpdateStrategyRollingUpdate)
	if err := f.mgr.Sync(context.Background(), tc); err != nil {
		t.Fatalf("converged sync: %v", err)
	}
	client := f.pd.ClusterClient("ns", "basic")
	recent := flow.WithObservation(context.Background(), flow.ObserveNone)

	client.ResetCalls()
	if err := f.mgr.Sync(recent, tc); err != nil {
		t.Fatalf("resync: %v", err)
	}
	if calls := client.Calls(); len(calls) != 0 {
		t.Errorf("members are recent and the StatefulSet did not change, yet PD was asked: %v", calls)
	}
	if !tc.Status.PD.Synced || len(tc.Status.PD.Members) != 3 {
		t.Errorf("reused members lost: %+v", tc.Status.PD)
	}

	// A pod turning unready changes the StatefulSet's status: ask PD again.
	sts, err := f.deps.StatefulSetLister.StatefulSets("ns").Get("basic-pd")
	if err != nil {
		t.Fatal(err)
	}
	sts = sts.DeepCopy()
	sts.Status.ReadyReplicas = 2
	mustAdd(t, f.deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	client.ResetCalls()
	if err := f.mgr.Sync(recent, tc); err != nil {
		t.Fatalf("resync after a StatefulSet change: %v", err)
	}
	if len(client.Calls()) == 0 {
		t.Error("the StatefulSet changed but PD was not asked")
	}
}
