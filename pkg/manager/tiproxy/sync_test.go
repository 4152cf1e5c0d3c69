package tiproxy

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/golden"
	"github.com/kubetidb/tidb-operator/pkg/tiproxyapi"
)

// syncFixture runs TiProxy in the skeleton over a fake API server whose
// objects the test copies into the informer caches, with fake proxies.
type syncFixture struct {
	kube    *fake.Clientset
	inf     informers.SharedInformerFactory
	proxies *tiproxyapi.FakeClient
	clock   *clocktesting.FakePassiveClock
	mgr     *component.Manager[*v1alpha1.TidbCluster]
}

func newSyncFixture() *syncFixture {
	kube := fake.NewSimpleClientset()
	inf := informers.NewSharedInformerFactory(kube, 0)
	f := &syncFixture{kube: kube, inf: inf, proxies: tiproxyapi.NewFakeClient(), clock: clocktesting.NewFakePassiveClock(now.Time)}
	core, apps := inf.Core().V1(), inf.Apps().V1()
	env := &component.Env{
		Writer: apply.NewApplier(kube, nil, apply.Caches{Services: core.Services().Lister(),
			ConfigMaps: core.ConfigMaps().Lister(), StatefulSets: apps.StatefulSets().Lister()}),
		Kube: kube, StatefulSets: apps.StatefulSets().Lister(), Pods: core.Pods().Lister(),
		ConfigMaps: core.ConfigMaps().Lister(), PVCs: core.PersistentVolumeClaims().Lister(),
		Clock: f.clock,
	}
	f.mgr = component.NewManager(NewWithClient(env, f.proxies), env)
	return f
}

// syncTC is basicCluster with PD available.
func syncTC(t *testing.T) *v1alpha1.TidbCluster {
	tc := golden.Cluster(t, basicCluster)
	tc.UID = "tc-uid"
	tc.Status.PD.Members = map[string]v1alpha1.PDMember{"basic-pd-0": {Name: "basic-pd-0", Health: true}}
	tc.Status.PD.StatefulSet = &appsv1.StatefulSetStatus{ReadyReplicas: 1}
	return tc
}

// seed copies what the fake API holds into the caches, gives the
// StatefulSet the status of revision rev everywhere but on the pods of
// the given ordinals (which stay on old), and makes every pod Ready since
// readySince.
func (f *syncFixture) seed(t *testing.T, rev string, old map[int32]bool, readySince time.Time) {
	t.Helper()
	ctx := context.Background()
	svcs, _ := f.kube.CoreV1().Services("ns").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		mustDo(t, f.inf.Core().V1().Services().Informer().GetIndexer().Update(&svcs.Items[i]))
	}
	cms, _ := f.kube.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{})
	for i := range cms.Items {
		mustDo(t, f.inf.Core().V1().ConfigMaps().Informer().GetIndexer().Update(&cms.Items[i]))
	}
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(ctx, "basic-tiproxy", metav1.GetOptions{})
	mustDo(t, err)
	current := rev
	if len(old) > 0 {
		current = "old"
	}
	sts.Status = appsv1.StatefulSetStatus{Replicas: *sts.Spec.Replicas, ReadyReplicas: *sts.Spec.Replicas,
		CurrentRevision: current, UpdateRevision: rev, ObservedGeneration: sts.Generation}
	mustDo(t, f.inf.Apps().V1().StatefulSets().Informer().GetIndexer().Update(sts))
	for o := int32(0); o < *sts.Spec.Replicas; o++ {
		podRev := rev
		if old[o] {
			podRev = "old"
		}
		labels := map[string]string{appsv1.ControllerRevisionHashLabelKey: podRev}
		for k, v := range sts.Spec.Template.Labels {
			labels[k] = v
		}
		pod := readyPod(o, readySince)
		pod.Labels = labels
		mustDo(t, f.inf.Core().V1().Pods().Informer().GetIndexer().Update(pod))
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *syncFixture) writes() []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range f.kube.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a)
		}
	}
	f.kube.ClearActions()
	return out
}

func (f *syncFixture) partition(t *testing.T) int32 {
	t.Helper()
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), "basic-tiproxy", metav1.GetOptions{})
	mustDo(t, err)
	return *sts.Spec.UpdateStrategy.RollingUpdate.Partition
}

// TestSyncCreatesThenConverges: the gate holds TiProxy until PD is
// available; the first sync creates the Services, ConfigMap and
// StatefulSet and waits; a converged cluster's sync writes nothing and
// reports every proxy healthy.
func TestSyncCreatesThenConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	tc := syncTC(t)
	tc.Status.PD = v1alpha1.PDStatus{}
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || len(f.writes()) != 0 {
		t.Fatalf("without PD: %v; want a wait and no write", err)
	}
	tc = syncTC(t)
	if err := f.mgr.Sync(ctx, tc); !waiting(err) {
		t.Fatalf("first sync: %v, want a wait for the pods", err)
	}
	var created []string
	for _, a := range f.writes() {
		created = append(created, fmt.Sprintf("%s %s", a.GetVerb(), a.GetResource().Resource))
	}
	want := []string{"create services", "create services", "create configmaps", "create statefulsets"}
	if fmt.Sprint(created) != fmt.Sprint(want) {
		t.Fatalf("first sync wrote %v, want %v", created, want)
	}
	f.seed(t, "r1", nil, before.Time)
	if err := f.mgr.Sync(ctx, tc); err != nil {
		t.Fatalf("converged sync: %v", err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("converged sync wrote %v", w)
	}
	if HealthyMembers(tc) != 2 || !tc.Status.TiProxy.Synced || tc.Status.TiProxy.Phase != v1alpha1.NormalPhase {
		t.Errorf("status = %+v", tc.Status.TiProxy)
	}
}

// TestRollingRestartWaitsForTheRestartedProxy: a new version restarts the
// highest ordinal first; the next waits until the restarted proxy answers
// healthy and has been Ready for min-ready-seconds.
func TestRollingRestartWaitsForTheRestartedProxy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	tc := syncTC(t)
	_ = f.mgr.Sync(ctx, tc)
	f.seed(t, "r1", nil, before.Time)
	mustDo(t, f.mgr.Sync(ctx, tc))
	f.writes()

	tc.Spec.TiProxy.Version = ptrTo("v1.3.1")
	tc.Annotations = map[string]string{label.AnnTiProxyMinReadySeconds: "60"}
	// The new template is applied with the partition kept; once the
	// StatefulSet has the new revision, pod 1 restarts first.
	if err := f.mgr.Sync(ctx, tc); err != nil || f.partition(t) != 2 {
		t.Fatalf("template change: %v, partition %d; want the template applied at partition 2", err, f.partition(t))
	}
	f.seed(t, "r2", map[int32]bool{0: true, 1: true}, before.Time)
	if err := f.mgr.Sync(ctx, tc); err != nil || f.partition(t) != 1 {
		t.Fatalf("new revision: %v, partition %d; want ordinal 1 restarted", err, f.partition(t))
	}
	// Pod 1 runs r2 but does not answer healthy yet: pod 0 waits.
	f.proxies.SetUnhealthy("ns", "basic-tiproxy-1", "not ready yet (500 service not ready)")
	f.seed(t, "r2", map[int32]bool{0: true}, now.Add(-10*time.Second))
	f.writes()
	if err := f.mgr.Sync(ctx, tc); !waiting(err) || f.partition(t) != 1 {
		t.Fatalf("restarted proxy unhealthy: %v, partition %d; want a wait at 1", err, f.partition(t))
	}
	// Healthy, but Ready for 10s of 60: still waiting, retried when due.
	f.proxies.SetHealthy("ns", "basic-tiproxy-1", 2)
	err := f.mgr.Sync(ctx, tc)
	if re, ok := flow.AsRequeue(err); !ok || re.After != 50*time.Second || f.partition(t) != 1 {
		t.Fatalf("within min-ready-seconds: %v, partition %d; want a 50s wait at 1", err, f.partition(t))
	}
	if tc.Status.TiProxy.Phase != v1alpha1.UpgradePhase {
		t.Errorf("phase %s during the rollout", tc.Status.TiProxy.Phase)
	}
	f.clock.SetTime(now.Add(time.Minute))
	if err := f.mgr.Sync(ctx, tc); err != nil || f.partition(t) != 0 {
		t.Fatalf("after min-ready-seconds: %v, partition %d; want ordinal 0 restarted", err, f.partition(t))
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestScaleInNeedsNoPreparation: a proxy keeps no data, so scale-in
// removes the highest ordinal at once, asking the proxies nothing.
func TestScaleInNeedsNoPreparation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newSyncFixture()
	tc := syncTC(t)
	_ = f.mgr.Sync(ctx, tc)
	f.seed(t, "r1", nil, before.Time)
	mustDo(t, f.mgr.Sync(ctx, tc))
	f.writes()
	tc.Spec.TiProxy.Replicas = 1
	if err := f.mgr.Sync(ctx, tc); err != nil {
		t.Fatalf("scale-in: %v", err)
	}
	sts, err := f.kube.AppsV1().StatefulSets("ns").Get(ctx, "basic-tiproxy", metav1.GetOptions{})
	mustDo(t, err)
	if *sts.Spec.Replicas != 1 || tc.Status.TiProxy.Phase != v1alpha1.ScalePhase {
		t.Errorf("replicas %d, phase %s; want 1 and Scale", *sts.Spec.Replicas, tc.Status.TiProxy.Phase)
	}
}
