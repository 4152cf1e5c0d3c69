//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

const readyTimeout = 4 * time.Minute

var (
	simOnce sync.Once
	sim     *simulator.Simulator
	simErr  error
)

// startSimulator runs one simulator for the whole test binary on simAddr,
// watching every namespace; it stops when the process exits.
func startSimulator(t *testing.T, env *framework.Env) *simclient.Client {
	t.Helper()
	simOnce.Do(func() {
		sim, simErr = simulator.New(simulator.Config{
			Kube: env.Kube, Dynamic: env.Dynamic, Listen: simAddr, Options: simulator.DefaultOptions(),
			TLS: e2eTLSAuthority(t),
		}, klog.Background().WithName("simulator"))
		if simErr == nil {
			simErr = sim.Start(context.Background())
		}
	})
	if simErr != nil {
		t.Fatalf("start simulator: %v", simErr)
	}
	return simclient.New(sim.URL(), &http.Client{Timeout: 10 * time.Second})
}

func TestBasicClusterBecomesReadyAndIsCollected(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	mgr := operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	ctx := env.Ctx

	framework.ApplyYAMLFile(t, ctx, filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"), env.Namespace)
	framework.WaitFor(t, ctx, readyTimeout, "basic is Ready", func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		progressing := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterProgressing)
		framework.Observef(ctx, "ready=%+v progressing=%+v", ready, progressing)
		return ready != nil && ready.Status == metav1.ConditionTrue, nil
	})

	tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkStatus(t, tc)
	checkObjects(t, ctx, env)
	checkCreationOrder(t, ctx, env)
	// The ready columns are StatefulSet readyReplicas copied at a sync, which may come just after Ready=True.
	framework.WaitFor(t, ctx, time.Minute, "kubectl get tc shows ready counts 3/3/2", func(ctx context.Context) (bool, error) {
		out, stderr, err := framework.KubectlErr("get", "tc", "basic", "-n", env.Namespace, "--no-headers")
		framework.Observef(ctx, "%q %s %v", out, stderr, err)
		f := strings.Fields(out)
		return err == nil && len(f) >= 7 && f[1] == "True" && f[2] == "3" && f[4] == "3" && f[6] == "2", nil
	})
	checkNoWritesWhenConverged(t, ctx, env, mgr)

	if err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Delete(ctx, "basic", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(t, ctx, 2*time.Minute, "children garbage-collected", func(ctx context.Context) (bool, error) {
		sets, err := env.Kube.AppsV1().StatefulSets(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		svcs, err := env.Kube.CoreV1().Services(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		_, err = env.Kube.AppsV1().Deployments(env.Namespace).Get(ctx, "basic-discovery", metav1.GetOptions{})
		framework.Observef(ctx, "%d StatefulSets, %d Services left, discovery: %v", len(sets.Items), len(svcs.Items), err)
		return len(sets.Items) == 0 && len(svcs.Items) == 0 && apierrors.IsNotFound(err), nil
	})
	pvcs, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvcs.Items) != 6 {
		t.Errorf("PVCs must outlive the cluster: %d left, want 6 (3 PD + 3 TiKV)", len(pvcs.Items))
	}
}

func checkStatus(t *testing.T, tc *v1alpha1.TidbCluster) {
	t.Helper()
	s := tc.Status
	if s.ClusterID == "" || !s.PD.Synced || len(s.PD.Members) != 3 || s.PD.Leader.Name == "" {
		t.Errorf("PD status incomplete: clusterID=%q synced=%v members=%d leader=%q", s.ClusterID, s.PD.Synced, len(s.PD.Members), s.PD.Leader.Name)
	}
	if !s.TiKV.Synced || !s.TiKV.BootStrapped || len(s.TiKV.Stores) != 3 {
		t.Errorf("TiKV status incomplete: synced=%v bootstrapped=%v stores=%d", s.TiKV.Synced, s.TiKV.BootStrapped, len(s.TiKV.Stores))
	}
	for id, st := range s.TiKV.Stores {
		if st.State != "Up" || !strings.HasPrefix(st.PodName, "basic-tikv-") {
			t.Errorf("store %s = %+v", id, st)
		}
	}
	if len(s.TiDB.Members) != 2 {
		t.Errorf("TiDB members = %d, want 2", len(s.TiDB.Members))
	}
	for _, c := range []struct {
		name  string
		phase v1alpha1.MemberPhase
		image string
	}{{"pd", s.PD.Phase, s.PD.Image}, {"tikv", s.TiKV.Phase, s.TiKV.Image}, {"tidb", s.TiDB.Phase, s.TiDB.Image}} {
		if c.phase != v1alpha1.NormalPhase || !strings.HasSuffix(c.image, ":v8.5.0") {
			t.Errorf("%s phase=%q image=%q", c.name, c.phase, c.image)
		}
	}
	if s.ObservedGeneration != tc.Generation {
		t.Errorf("observedGeneration %d, generation %d", s.ObservedGeneration, tc.Generation)
	}
}

// checkObjects asserts the TiDB Operator's names, labels, selectors and ports.
func checkObjects(t *testing.T, ctx context.Context, env *framework.Env) {
	t.Helper()
	wantPorts := map[string]string{
		"basic-discovery": "discovery:10261,proxy:10262",
		"basic-pd":        "client:2379",
		"basic-pd-peer":   "tcp-peer-2380:2380,tcp-peer-2379:2379",
		"basic-tikv-peer": "peer:20160",
		"basic-tidb-peer": "status:10080",
		"basic-tidb":      "mysql-client:4000,status:10080",
	}
	for name, want := range wantPorts {
		svc, err := env.Kube.CoreV1().Services(env.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("Service %s: %v", name, err)
			continue
		}
		var ports []string
		for _, p := range svc.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d", p.Name, p.Port))
		}
		if got := strings.Join(ports, ","); got != want {
			t.Errorf("Service %s ports %s, want %s", name, got, want)
		}
		if svc.Labels["app.kubernetes.io/managed-by"] != "tidb-operator" || svc.Spec.Selector["app.kubernetes.io/instance"] != "basic" {
			t.Errorf("Service %s labels %v selector %v", name, svc.Labels, svc.Spec.Selector)
		}
	}
	for _, comp := range []string{"pd", "tikv", "tidb"} {
		sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, "basic-"+comp, metav1.GetOptions{})
		if err != nil {
			t.Errorf("StatefulSet basic-%s: %v", comp, err)
			continue
		}
		want := map[string]string{"app.kubernetes.io/name": "tidb-cluster", "app.kubernetes.io/managed-by": "tidb-operator",
			"app.kubernetes.io/instance": "basic", "app.kubernetes.io/component": comp}
		for k, v := range want {
			if sts.Spec.Selector.MatchLabels[k] != v {
				t.Errorf("basic-%s selector %v lacks %s=%s", comp, sts.Spec.Selector.MatchLabels, k, v)
			}
		}
		if sts.Spec.ServiceName != "basic-"+comp+"-peer" || sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
			t.Errorf("basic-%s serviceName=%s policy=%s", comp, sts.Spec.ServiceName, sts.Spec.PodManagementPolicy)
		}
	}
	for _, pvc := range []string{"pd-basic-pd-0", "pd-basic-pd-2", "tikv-basic-tikv-0", "tikv-basic-tikv-2"} {
		if _, err := env.Kube.CoreV1().PersistentVolumeClaims(env.Namespace).Get(ctx, pvc, metav1.GetOptions{}); err != nil {
			t.Errorf("PVC %s: %v", pvc, err)
		}
	}
}

// checkCreationOrder asserts discovery → PD → TiKV → TiDB.
func checkCreationOrder(t *testing.T, ctx context.Context, env *framework.Env) {
	t.Helper()
	var times []time.Time
	dep, err := env.Kube.AppsV1().Deployments(env.Namespace).Get(ctx, "basic-discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	times = append(times, dep.CreationTimestamp.Time)
	for _, comp := range []string{"pd", "tikv", "tidb"} {
		sts, err := env.Kube.AppsV1().StatefulSets(env.Namespace).Get(ctx, "basic-"+comp, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, sts.CreationTimestamp.Time)
	}
	if !sort.SliceIsSorted(times, func(i, j int) bool { return times[i].Before(times[j]) }) {
		t.Errorf("creation order is not discovery → PD → TiKV → TiDB: %v", times)
	}
}
