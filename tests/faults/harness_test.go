//go:build integration

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// Deadlines of the waits; generous because up to four scenarios share two cores.
const (
	readyTimeout = 5 * time.Minute
	stepTimeout  = 3 * time.Minute
)

// scOptions shape one scenario's cluster, simulator and operator.
type scOptions struct {
	pd, tikv, tidb int32 // replicas; 0 means the example's (3, 3, 2)
	// extras are components added to examples/basic (components_test.go).
	extras []extra
	// tcMutate edits the TidbCluster before it is created.
	tcMutate func(*v1alpha1.TidbCluster)
	// timings edits the simulator's timings (FastTimings by default).
	timings func(*simulator.Timings)
	// manager edits the in-process operator's options; noManager starts none.
	manager func(*app.Options)
	// startOperator replaces the in-process operator (e.g. by a real process).
	startOperator func(*sc)
	// beforeConverge runs once the TidbCluster is created, before the convergence wait.
	beforeConverge func(*sc)
	// cp is a private control plane; nil uses the suite's shared one.
	cp *controlPlane
	// excuse lists invariants the scenario itself breaks on purpose (still checked and counted).
	excuse []invariant
}

// sc is one running scenario: its namespace, simulator, checker and operator.
type sc struct {
	t     *testing.T
	env   *framework.Env
	pc    versioned.Interface
	sim   *simclient.Client
	route *route
	chk   *checker
	mgr   *operator.Manager
	opts  scOptions
	// chart is the chart RBAC the supervised operator runs with.
	chart *operator.ChartRelease
}

// start prepares a scenario and deploys the cluster until it has converged; the checker runs from
// before the TidbCluster is created until the scenario's cleanup, which reports its figures.
func start(t *testing.T, o scOptions) *sc {
	t.Helper()
	s := &sc{t: t, opts: o}
	if o.cp != nil {
		s.env = o.cp.newEnv(t)
	} else {
		operator.InstallCRDs(t)
		s.env = framework.NewEnv(t)
	}
	s.pc = versioned.NewForConfigOrDie(s.env.Config)
	s.startSimulator()
	s.chk = newChecker(s.env, s.pc, s.sim, o.excuse)
	if err := s.chk.start(s.env.Ctx); err != nil {
		t.Fatalf("start the invariant checker: %v", err)
	}
	s.route.beforeWrite = s.chk.beforeWrite
	t.Cleanup(s.report)
	if o.startOperator != nil {
		o.startOperator(s)
	} else {
		s.mgr = s.startManager()
	}
	s.createCluster()
	if o.beforeConverge != nil {
		o.beforeConverge(s)
	}
	s.waitConverged("the new cluster converges")
	return s
}

func (s *sc) startSimulator() {
	opts := simulator.DefaultOptions()
	if s.opts.timings != nil {
		s.opts.timings(&opts.Timings)
	}
	sim, err := simulator.New(simulator.Config{Kube: s.env.Kube, Dynamic: s.env.Dynamic, Namespace: s.env.Namespace,
		Listen: "127.0.0.1:0", Options: opts}, klog.Background().WithName("simulator").WithValues("ns", s.env.Namespace))
	if err != nil {
		s.t.Fatalf("new simulator: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.t.Cleanup(cancel)
	if err := sim.Start(ctx); err != nil {
		s.t.Fatalf("start simulator: %v", err)
	}
	s.sim = simclient.New(sim.URL(), &http.Client{Timeout: 10 * time.Second})
	rt, unregister, err := pdProxyOf(s.t).register(s.env.Namespace, sim.URL())
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(unregister)
	s.route = rt
}

// startManager runs an operator in this process (leader election on, Lease in the namespace).
func (s *sc) startManager(mutate ...func(*app.Options)) *operator.Manager {
	return operator.StartManager(s.t, s.env.Namespace, func(o *app.Options) {
		if s.opts.cp != nil {
			o.Kubeconfig = s.opts.cp.kubeconfig
		}
		if s.opts.manager != nil {
			s.opts.manager(o)
		}
		for _, m := range mutate {
			m(o)
		}
	})
}

// restartManager stops the in-process operator abruptly (its context is cancelled wherever it is in
// a sync) and starts a new one, which must finish the work from what it observes.
func (s *sc) restartManager() {
	s.t.Helper()
	if err := s.mgr.Stop(); err != nil {
		s.t.Fatalf("stop the operator: %v", err)
	}
	s.mgr = s.startManager()
}

func (s *sc) createCluster() {
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "examples", "basic", "tidb-cluster.yaml"))
	if err != nil {
		s.t.Fatal(err)
	}
	tc := &v1alpha1.TidbCluster{}
	if err := yaml.Unmarshal(raw, tc); err != nil {
		s.t.Fatalf("parse examples/basic: %v", err)
	}
	for _, r := range []struct {
		want int32
		into *int32
	}{{s.opts.pd, &tc.Spec.PD.Replicas}, {s.opts.tikv, &tc.Spec.TiKV.Replicas}, {s.opts.tidb, &tc.Spec.TiDB.Replicas}} {
		if r.want > 0 {
			*r.into = r.want
		}
	}
	if err := addExtras(tc, s.opts.extras); err != nil {
		s.t.Fatal(err)
	}
	if s.opts.tcMutate != nil {
		s.opts.tcMutate(tc)
	}
	if _, err := s.pc.PingcapV1alpha1().TidbClusters(s.env.Namespace).Create(s.env.Ctx, tc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create TidbCluster: %v", err)
	}
}

// report stops the checker, fails the scenario on each violation and records its figures.
func (s *sc) report() {
	checks, violations := s.chk.finish()
	for _, v := range violations {
		s.t.Errorf("invariant violated: %s", v)
	}
	recordChecks(s.t, checks, len(violations))
}

// kubeconfig is the admin kubeconfig of the scenario's control plane (its private one, or the suite's).
func (s *sc) kubeconfig() string {
	if s.opts.cp != nil {
		return s.opts.cp.kubeconfig
	}
	return framework.KubeconfigPath()
}

func (s *sc) tc(ctx context.Context) (*v1alpha1.TidbCluster, error) {
	return s.pc.PingcapV1alpha1().TidbClusters(s.env.Namespace).Get(ctx, "basic", metav1.GetOptions{})
}

// patch merge-patches the TidbCluster's spec.
func (s *sc) patch(spec map[string]any) {
	s.t.Helper()
	body, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.pc.PingcapV1alpha1().TidbClusters(s.env.Namespace).Patch(s.env.Ctx, "basic", types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("patch basic: %v", err)
	}
}

// waitConverged waits until the cluster is Ready at its generation, every component is Normal, each
// StatefulSet runs spec.replicas updated and ready pods, and PD has no evict-leader scheduler. Every
// evaluation counts as a check of invConverged; only the last one must pass.
func (s *sc) waitConverged(desc string) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, readyTimeout, desc, func(ctx context.Context) (bool, error) {
		ok, why := s.converged(ctx)
		framework.Observef(ctx, "%s", why)
		s.chk.mu.Lock()
		s.chk.checks[invConverged]++
		s.chk.mu.Unlock()
		return ok, nil
	})
}

func (s *sc) converged(ctx context.Context) (bool, string) {
	tc, err := s.tc(ctx)
	if err != nil {
		return false, err.Error()
	}
	ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || tc.Status.ObservedGeneration != tc.Generation {
		return false, fmt.Sprintf("generation %d/%d ready=%+v", tc.Status.ObservedGeneration, tc.Generation, ready)
	}
	if tc.Status.PD.Phase != v1alpha1.NormalPhase || tc.Status.TiKV.Phase != v1alpha1.NormalPhase || tc.Status.TiDB.Phase != v1alpha1.NormalPhase {
		return false, fmt.Sprintf("phases pd=%s tikv=%s tidb=%s", tc.Status.PD.Phase, tc.Status.TiKV.Phase, tc.Status.TiDB.Phase)
	}
	for c, want := range map[string]int32{"pd": tc.Spec.PD.Replicas, "tikv": tc.Spec.TiKV.Replicas, "tidb": tc.Spec.TiDB.Replicas} {
		sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(ctx, "basic-"+c, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if why := stsAt(sts, want); why != "" {
			return false, why
		}
	}
	if ok, why := s.extrasConverged(ctx, tc); !ok {
		return false, why
	}
	st, err := s.sim.Cluster(ctx, s.env.Namespace, "basic")
	if err != nil {
		return false, err.Error()
	}
	if ev := evictSchedulers(st); len(ev) > 0 {
		return false, fmt.Sprintf("evict-leader schedulers %v", ev)
	}
	return true, ""
}

// stsAt says why sts does not run want updated, ready replicas ("" when it does).
func stsAt(sts *appsv1.StatefulSet, want int32) string {
	st := sts.Status
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != want || st.ObservedGeneration != sts.Generation ||
		st.ReadyReplicas != want || st.UpdatedReplicas != want || st.CurrentRevision != st.UpdateRevision {
		return fmt.Sprintf("%s spec.replicas=%v want %d, status %+v", sts.Name, sts.Spec.Replicas, want, st)
	}
	return ""
}

// waitSim waits until the simulated cluster satisfies cond.
func (s *sc) waitSim(desc string, cond func(*api.ClusterState) bool) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, desc, func(ctx context.Context) (bool, error) {
		st, err := s.sim.Cluster(ctx, s.env.Namespace, "basic")
		if err != nil {
			if ctx.Err() != nil {
				return false, nil // the deadline cut this read short: keep the last real observation
			}
			framework.Observef(ctx, "simulator: %v", err)
			return false, nil
		}
		framework.Observef(ctx, "members %+v stores %+v schedulers %v", st.Members, st.Stores, st.Schedulers)
		return cond(st), nil
	})
}

// waitTC waits until the TidbCluster satisfies cond.
func (s *sc) waitTC(desc string, cond func(*v1alpha1.TidbCluster) bool) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, desc, func(ctx context.Context) (bool, error) {
		tc, err := s.tc(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return false, nil // the deadline cut this read short: keep the last real observation
			}
			framework.Observef(ctx, "get: %v", err)
			return false, nil
		}
		framework.Observef(ctx, "status %+v", tc.Status)
		return cond(tc), nil
	})
}

// waitSTS waits until the component's StatefulSet satisfies cond.
func (s *sc) waitSTS(component, desc string, cond func(*appsv1.StatefulSet) bool) {
	s.t.Helper()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, desc, func(ctx context.Context) (bool, error) {
		sts, err := s.env.Kube.AppsV1().StatefulSets(s.env.Namespace).Get(ctx, "basic-"+component, metav1.GetOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return false, nil // the deadline cut this read short: keep the last real observation
			}
			framework.Observef(ctx, "get: %v", err)
			return false, nil
		}
		framework.Observef(ctx, "spec.replicas=%v strategy=%+v status=%+v", *sts.Spec.Replicas, sts.Spec.UpdateStrategy, sts.Status)
		return cond(sts), nil
	})
}

// waitOperatorRequests waits until the operator has sent n more PD/TiKV/TiDB requests than it had
// when called; failed counts only the failed ones. It is how a scenario knows the operator has
// seen a fault (several syncs ran against it) without sleeping.
func (s *sc) waitOperatorRequests(n int64, failed bool, desc string) {
	s.t.Helper()
	counter := &s.route.requests
	if failed {
		counter = &s.route.failed
	}
	from := counter.Load()
	framework.WaitFor(s.t, s.env.Ctx, stepTimeout, desc, func(ctx context.Context) (bool, error) {
		framework.Observef(ctx, "%d of %d requests", counter.Load()-from, n)
		return counter.Load()-from >= n, nil
	})
}

// partitionMoved: a rolling update of the StatefulSet has started.
func partitionMoved(sts *appsv1.StatefulSet) bool {
	ru := sts.Spec.UpdateStrategy.RollingUpdate
	return ru != nil && ru.Partition != nil && sts.Spec.Replicas != nil && *ru.Partition < *sts.Spec.Replicas
}

// anyEvicting: a TiKV store is evicting its leaders for a restart.
func anyEvicting(st *api.ClusterState) bool {
	for _, s := range st.Stores {
		if s.Evicting {
			return true
		}
	}
	return false
}

// storeOf returns the ID of the live store of pod, 0 if none.
func storeOf(st *api.ClusterState, pod string) uint64 {
	if s := liveStore(st, pod); s != nil {
		return s.ID
	}
	return 0
}

// mustState reads the simulated cluster or fails the test.
func (s *sc) mustState() *api.ClusterState {
	s.t.Helper()
	st, err := s.sim.Cluster(s.env.Ctx, s.env.Namespace, "basic")
	if err != nil {
		s.t.Fatalf("simulator: %v", err)
	}
	return st
}

// setTimings changes the scenario's simulator timings.
func (s *sc) setTimings(u api.TimingsUpdate) {
	s.t.Helper()
	if _, err := s.sim.SetTimings(s.env.Ctx, u); err != nil {
		s.t.Fatalf("simulator timings: %v", err)
	}
}

func dur(d time.Duration) *api.Duration { v := api.Duration(d); return &v }

// images returns the image of the main container of each pod of a component.
func (s *sc) images(component string) map[string]string {
	s.t.Helper()
	pods, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).List(s.env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component=" + component})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			if c.Name == component {
				out[p.Name] = c.Image
			}
		}
	}
	return out
}

// expectImages fails unless every pod of component runs an image with tag.
func (s *sc) expectImages(component, tag string) {
	s.t.Helper()
	for pod, img := range s.images(component) {
		if !strings.HasSuffix(img, ":"+tag) {
			s.t.Errorf("%s runs %s, want tag %s", pod, img, tag)
		}
	}
}

// podUIDs maps each pod of component to its UID.
func (s *sc) podUIDs(component string) map[string]types.UID {
	s.t.Helper()
	pods, err := s.env.Kube.CoreV1().Pods(s.env.Namespace).List(s.env.Ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=basic,app.kubernetes.io/component=" + component})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}
