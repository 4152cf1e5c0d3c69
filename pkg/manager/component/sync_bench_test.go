package component_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/controller/tidbcluster"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/discovery"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/tidb"
	"github.com/kubetidb/tidb-operator/pkg/manager/tiflash"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
	"github.com/kubetidb/tidb-operator/pkg/tidbapi"
)

// healthyTiDB is a tidbapi.Client whose servers are all healthy; unlike
// tidbapi.FakeClient it records nothing, so a long benchmark does not grow.
type healthyTiDB struct{}

func (healthyTiDB) GetHealth(context.Context, string, string, string, tidbapi.Options) (bool, error) {
	return true, nil
}

func (healthyTiDB) GetInfo(context.Context, string, string, string, tidbapi.Options) (*tidbapi.Info, error) {
	return &tidbapi.Info{}, nil
}

// clusterFixture is the whole TidbCluster control — discovery, PD, TiFlash,
// TiKV and TiDB in the registry's order (pkg/manager/members; the PV
// reclaim steps are left out) — over fake clientsets, seeded informer
// indexers and fake PD and TiDB APIs. TiFlash has no store-status client:
// it is asked only after a restart.
type clusterFixture struct {
	deps    *controller.FakeDependencies
	pd      *pdapi.FakeControl
	control tidbcluster.ControlInterface
}

func newClusterFixture() *clusterFixture {
	deps := controller.NewFakeDependencies()
	fc := pdapi.NewFakeControl()
	env := newEnv(deps, fc)
	env.DiscoveryImage = "pingcap/tidb-operator:latest"
	d := deps.Dependencies
	comps := []tidbcluster.Component{
		discovery.New(env),
		component.NewManager(pd.New(env), env),
		component.NewManager(tiflash.New(env), env),
		component.NewManager(tikv.New(env), env),
		component.NewManager(tidb.NewWithClient(env, healthyTiDB{}), env),
	}
	return &clusterFixture{deps: deps, pd: fc,
		control: tidbcluster.NewDefaultControl(comps, tidbcluster.NewStatusUpdater(d.Clientset), d.Recorder, nil, nil)}
}

// converge creates tc in the fake API and syncs it, playing the informers,
// the StatefulSet controller, KWOK and PD after each sync, until a sync
// succeeds without writing. It returns the stored cluster.
func (f *clusterFixture) converge(tb testing.TB, tc *v1alpha1.TidbCluster) *v1alpha1.TidbCluster {
	tb.Helper()
	ctx := context.Background()
	clusters := f.deps.FakePingcap.PingcapV1alpha1().TidbClusters(tc.Namespace)
	if _, err := clusters.Create(ctx, tc, metav1.CreateOptions{}); err != nil {
		tb.Fatal(err)
	}
	for range 10 {
		stored, err := clusters.Get(ctx, tc.Name, metav1.GetOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		f.deps.FakeKube.ClearActions()
		f.deps.FakePingcap.ClearActions()
		syncErr := f.control.UpdateTidbCluster(ctx, stored.DeepCopy())
		f.drainEvents()
		if syncErr == nil && len(writes(f.deps)) == 0 && len(f.deps.FakePingcap.Actions()) == 0 {
			return stored
		}
		f.play(tb, tc.Namespace, tc.Name)
	}
	tb.Fatal("the cluster did not converge in 10 syncs")
	return nil
}

func (f *clusterFixture) drainEvents() {
	for {
		select {
		case <-f.deps.FakeRecorder.Events:
		default:
			return
		}
	}
}

// play copies what the fake API holds into the indexers, rolls every
// StatefulSet out with Ready pods, and makes PD report those pods as
// healthy members and Up stores (TiFlash's labelled engine=tiflash, as
// TiFlash registers them, without leaders).
func (f *clusterFixture) play(tb testing.TB, ns, name string) {
	tb.Helper()
	ctx := context.Background()
	kube, inf := f.deps.KubeClient, f.deps.KubeInformerFactory
	all := metav1.ListOptions{}
	put := func(i cache.SharedIndexInformer, obj any) {
		if err := i.GetIndexer().Update(obj); err != nil {
			tb.Fatal(err)
		}
	}
	lists := []struct {
		informer cache.SharedIndexInformer
		list     func() (runtime.Object, error)
	}{
		{inf.Core().V1().Services().Informer(), func() (runtime.Object, error) { return kube.CoreV1().Services(ns).List(ctx, all) }},
		{inf.Core().V1().ConfigMaps().Informer(), func() (runtime.Object, error) { return kube.CoreV1().ConfigMaps(ns).List(ctx, all) }},
		{inf.Core().V1().ServiceAccounts().Informer(), func() (runtime.Object, error) { return kube.CoreV1().ServiceAccounts(ns).List(ctx, all) }},
		{inf.Rbac().V1().Roles().Informer(), func() (runtime.Object, error) { return kube.RbacV1().Roles(ns).List(ctx, all) }},
		{inf.Rbac().V1().RoleBindings().Informer(), func() (runtime.Object, error) { return kube.RbacV1().RoleBindings(ns).List(ctx, all) }},
		{inf.Apps().V1().Deployments().Informer(), func() (runtime.Object, error) { return kube.AppsV1().Deployments(ns).List(ctx, all) }},
	}
	for _, l := range lists {
		list, err := l.list()
		if err != nil {
			tb.Fatal(err)
		}
		objs, err := meta.ExtractList(list)
		if err != nil {
			tb.Fatal(err)
		}
		for _, o := range objs {
			put(l.informer, o)
		}
	}
	sets, err := kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	pdClient := f.pd.ClusterClient(ns, name)
	var health pdapi.HealthInfo
	var members []*pdapi.Member
	var stores []*pdapi.StoreInfo
	for i := range sets.Items {
		s := sets.Items[i].DeepCopy()
		n := *s.Spec.Replicas
		s.Status = appsv1.StatefulSetStatus{Replicas: n, ReadyReplicas: n, AvailableReplicas: n, CurrentReplicas: n,
			UpdatedReplicas: n, CurrentRevision: "r1", UpdateRevision: "r1", ObservedGeneration: s.Generation}
		put(inf.Apps().V1().StatefulSets().Informer(), s)
		comp := s.Spec.Template.Labels["app.kubernetes.io/component"]
		for o := range n {
			pod := f.podInAPI(tb, readyPod(s, o))
			put(inf.Core().V1().Pods().Informer(), pod)
			peer := fmt.Sprintf("%s.%s-%s-peer.%s.svc", pod.Name, name, comp, ns)
			switch comp {
			case "pd":
				id := uint64(o) + 1
				health = append(health, pdapi.MemberHealth{Name: pod.Name, MemberID: id, Health: true, ClientUrls: []string{"http://" + peer + ":2379"}})
				members = append(members, &pdapi.Member{Name: pod.Name, MemberID: id})
			case "tikv":
				stores = append(stores, &pdapi.StoreInfo{
					Store:  &pdapi.MetaStore{ID: uint64(o) + 1, Address: peer + ":20160", StateName: "Up"},
					Status: &pdapi.StoreStatus{LeaderCount: 100, RegionCount: 300},
				})
			case "tiflash":
				stores = append(stores, &pdapi.StoreInfo{
					Store: &pdapi.MetaStore{ID: uint64(o) + 1001, Address: peer + ":3930", StateName: "Up",
						Labels: []*pdapi.StoreLabel{{Key: "engine", Value: "tiflash"}}},
					Status: &pdapi.StoreStatus{RegionCount: 300},
				})
			}
		}
	}
	if len(members) > 0 {
		pdClient.SetHealth(health)
		pdClient.SetMembers(members[0].Name, members...)
		pdClient.SetCluster(pdapi.Cluster{ID: 42})
	}
	pdClient.SetStores(stores...)
}

// podInAPI creates pod in the fake API unless it is there, and returns
// what the API holds (with the labels the operator patched on it).
func (f *clusterFixture) podInAPI(tb testing.TB, pod *corev1.Pod) *corev1.Pod {
	tb.Helper()
	pods := f.deps.KubeClient.CoreV1().Pods(pod.Namespace)
	live, err := pods.Get(context.Background(), pod.Name, metav1.GetOptions{})
	if err == nil {
		return live
	}
	created, err := pods.Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return created
}

func readyPod(s *appsv1.StatefulSet, ordinal int32) *corev1.Pod {
	labels := map[string]string{appsv1.ControllerRevisionHashLabelKey: "r1"}
	for k, v := range s.Spec.Template.Labels {
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", s.Name, ordinal), Namespace: s.Namespace, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// BenchmarkConvergedClusterSync is one resync of a converged cluster: the
// whole control (defaulting, validation, discovery, PD, TiFlash, TiKV,
// TiDB, status) on a DeepCopy, as the controller shell runs it. It must
// make no API write; the PD and TiDB reads go to fakes, so this is the
// operator's own CPU and allocations per resync. Besides ns, B and allocs
// per op it reports them per pod of the shape (discovery included, as the
// scale bench divides), and the PD calls of one sync: every method, and
// GetStores alone, which TiKV and TiFlash share (flow.Remember) — more
// than one per sync fails the benchmark.
func BenchmarkConvergedClusterSync(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			f := newClusterFixture()
			stored := f.converge(b, newBenchTC(s))
			if stored.ResourceVersion == "" {
				stored.ResourceVersion = "1" // as the API server sets it; the fake tracker does not
			}
			pdClient := f.pd.ClusterClient("ns", "db")
			pdClient.ResetCalls()
			var calls pdCalls
			ctx := context.Background()
			b.ReportAllocs()
			var mem0, mem1 goruntime.MemStats
			goruntime.ReadMemStats(&mem0)
			b.ResetTimer()
			for i := range b.N {
				if err := f.control.UpdateTidbCluster(ctx, stored.DeepCopy()); err != nil {
					b.Fatalf("converged sync: %v", err)
				}
				if i%1024 == 1023 { // the fake PD records every call
					b.StopTimer()
					calls.add(pdClient)
					b.StartTimer()
				}
			}
			b.StopTimer()
			goruntime.ReadMemStats(&mem1)
			calls.add(pdClient)
			if w := writes(f.deps); len(w) != 0 || len(f.deps.FakePingcap.Actions()) != 0 {
				b.Fatalf("a converged sync wrote: %v %v", w, f.deps.FakePingcap.Actions())
			}
			if calls.stores > b.N {
				b.Fatalf("%d GetStores in %d syncs: TiKV and TiFlash must share one per sync", calls.stores, b.N)
			}
			n, pods := float64(b.N), float64(s.pods())
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/pods, "ns/pod")
			b.ReportMetric(float64(mem1.TotalAlloc-mem0.TotalAlloc)/n/pods, "B/pod")
			b.ReportMetric(float64(mem1.Mallocs-mem0.Mallocs)/n/pods, "allocs/pod")
			b.ReportMetric(float64(calls.all)/n, "pd-calls/op")
			b.ReportMetric(float64(calls.stores)/n, "pd-getstores/op")
		})
	}
}

// pdCalls counts the calls a fake PD recorded, over several resets.
type pdCalls struct{ all, stores int }

// add counts pd's recorded calls and forgets them.
func (c *pdCalls) add(pd *pdapi.FakeClient) {
	for _, call := range pd.Calls() {
		c.all++
		if call.Method == pdapi.MethodGetStores {
			c.stores++
		}
	}
	pd.ResetCalls()
}

// TestConvergedClusterSyncFixtureConverges runs BenchmarkConvergedClusterSync's
// fixture once per shape in make test, so that the benchmark (make bench)
// cannot stop converging unnoticed: every shape converges, and a converged
// sync writes nothing.
func TestConvergedClusterSyncFixtureConverges(t *testing.T) {
	t.Parallel()
	for _, s := range benchShapes {
		f := newClusterFixture()
		stored := f.converge(t, newBenchTC(s))
		if err := f.control.UpdateTidbCluster(context.Background(), stored.DeepCopy()); err != nil {
			t.Fatalf("%s: converged sync: %v", s.name, err)
		}
		if w := writes(f.deps); len(w) != 0 {
			t.Errorf("%s: a converged sync wrote: %v", s.name, w)
		}
	}
}
