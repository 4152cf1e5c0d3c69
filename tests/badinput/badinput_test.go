//go:build integration

package badinput

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/simulator"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/badinput/corpus"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// resources are the corpus kinds, by kind.
var resources = map[string]schema.GroupVersionResource{
	"TidbCluster":      {Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbclusters"},
	"Backup":           {Group: "pingcap.com", Version: "v1alpha1", Resource: "backups"},
	"Restore":          {Group: "pingcap.com", Version: "v1alpha1", Resource: "restores"},
	"BackupSchedule":   {Group: "pingcap.com", Version: "v1alpha1", Resource: "backupschedules"},
	"TidbMonitor":      {Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbmonitors"},
	"TidbDashboard":    {Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbdashboards"},
	"TidbNGMonitoring": {Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbngmonitorings"},
	"TidbInitializer":  {Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbinitializers"},
	"DMCluster":        {Group: "pingcap.com", Version: "v1alpha1", Resource: "dmclusters"},
}

// kinds lists the corpus kinds in the order the figures show them.
var kinds = []string{"TidbCluster", "Backup", "Restore", "BackupSchedule", "TidbMonitor", "TidbDashboard", "TidbNGMonitoring", "TidbInitializer", "DMCluster"}

const (
	// healthyName is the cluster that must keep converging beside the corpus.
	healthyName = "healthy"
	// invalidWithin bounds how long an accepted case may take to be
	// reported invalid: the first sync of each object does it.
	invalidWithin = 60 * time.Second
	// reportedWithin bounds the cases that are built and reported (a
	// missing Secret is looked for once a pod is stuck for 30 s).
	reportedWithin = 150 * time.Second
	readyTimeout   = 3 * time.Minute
)

// healthy is a 1/1/1 cluster; it is scaled to 2 TiKV stores while the
// corpus exists.
const healthy = `apiVersion: pingcap.com/v1alpha1
kind: TidbCluster
metadata:
  name: ` + healthyName + `
spec:
  version: v8.5.0
  pd: {baseImage: pingcap/pd, replicas: 1, maxFailoverCount: 0, requests: {storage: 1Gi}}
  tikv: {baseImage: pingcap/tikv, replicas: 1, maxFailoverCount: 0, requests: {storage: 1Gi}}
  tidb: {baseImage: pingcap/tidb, replicas: 1, maxFailoverCount: 0}
`

// TestBadInputNeverStopsAHealthyCluster creates every corpus case at once
// beside a healthy cluster. Each case must end in exactly one of:
// rejected by the API server naming its field; or accepted, reported
// invalid at its first sync (TidbCluster Degraded=True InvalidSpec,
// Backup/Restore/TidbMonitor Invalid=True, TidbDashboard/TidbNGMonitoring
// and DMCluster Ready=False FailedValidation, TidbInitializer's Invalid
// job condition, and for every kind a Warning FailedValidation event) naming its field,
// with no object written for it; or, where the case declares it, built and
// reported (tls-no-secrets), built as valid (a name at the length limit),
// or for the four monitoring and init kinds reported missing a TidbCluster,
// Secret or ConfigMap with nothing written. Meanwhile the healthy cluster
// becomes Ready and is scaled from 1 to 2 TiKV stores, and a valid
// TidbMonitor, TidbDashboard, TidbNGMonitoring, TidbInitializer and
// DMCluster created beside the corpus (sentinel_test.go) each get their objects
// written. The figures per kind are logged and written to
// _output/badinput/figures.md.
func TestBadInputNeverStopsAHealthyCluster(t *testing.T) {
	start := time.Now()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := versioned.NewForConfigOrDie(env.Config)
	framework.ApplyYAML(t, env.Ctx, healthy, env.Namespace)

	cases, err := corpus.Cases()
	if err != nil {
		t.Fatal(err)
	}
	setup := time.Since(start)
	results := createAll(t, env, cases)
	framework.ApplyYAML(t, env.Ctx, sentinels, env.Namespace)
	t.Logf("operator and simulator up in %s; %d cases created in %s", setup.Round(time.Millisecond),
		len(results), (time.Since(start) - setup).Round(time.Millisecond))

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watchOutcomes(env, results)
	}()

	waitHealthy(t, env, pc, 1)
	patch := []byte(`{"spec":{"tikv":{"replicas":2}}}`)
	if _, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Patch(env.Ctx, healthyName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("scale %s: %v", healthyName, err)
	}
	waitHealthy(t, env, pc, 2)
	t.Logf("%s scaled to 2 TiKV stores and Ready after %s", healthyName, time.Since(start).Round(time.Second))
	wg.Wait()
	t.Logf("every case resolved after %s", time.Since(start).Round(time.Second))
	reconciled := waitSentinels(t, env, readyTimeout)
	t.Logf("sentinels of %d kinds reconciled after %s", len(reconciled), time.Since(start).Round(time.Second))

	checkWrites(t, env, results)
	writeFigures(t, results, reconciled, time.Since(start))
	report(t, results, time.Since(start))
}

var (
	simOnce sync.Once
	sim     *simulator.Simulator
	simErr  error
)

// startSimulator runs one simulator for the test binary on simAddr,
// watching every namespace; it stops when the process exits.
func startSimulator(t *testing.T, env *framework.Env) *simclient.Client {
	t.Helper()
	simOnce.Do(func() {
		sim, simErr = simulator.New(simulator.Config{
			Kube: env.Kube, Dynamic: env.Dynamic, Listen: simAddr, Options: simulator.DefaultOptions(),
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

// createAll creates every case through the dynamic client (unstructured,
// so no Go type of the operator is involved on the way in), 16 at a time,
// and records the rejections.
func createAll(t *testing.T, env *framework.Env, cases []corpus.Case) []*result {
	t.Helper()
	results := make([]*result, len(cases))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, c := range cases {
		obj, err := corpus.Object(c)
		if err != nil {
			t.Fatal(err)
		}
		results[i] = &result{c: c, name: corpus.ObjectName(c)}
		wg.Add(1)
		go func(r *result, obj map[string]any) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			began := time.Now()
			created, err := env.Dynamic.Resource(resources[corpus.KindOf(r.c)]).Namespace(env.Namespace).
				Create(env.Ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
			r.createMS = time.Since(began).Milliseconds()
			if err != nil {
				r.rejected = err.Error()
				r.resolveRejected()
				return
			}
			r.uid = created.GetUID()
		}(results[i], obj)
	}
	wg.Wait()
	return results
}

// watchOutcomes polls (one list per kind and one of events per round)
// until every accepted case is resolved or its time is up.
func watchOutcomes(env *framework.Env, results []*result) {
	begin := time.Now()
	ctx := env.Ctx
	for {
		open := 0
		snap, err := takeSnapshot(ctx, env)
		if err == nil {
			updateRunning(env, results, snap)
		}
		for _, r := range results {
			if r.done {
				continue
			}
			if err == nil && r.updatePending() {
				r.seen = "waiting for the operator to write its objects before the update"
			} else if err == nil {
				r.observe(snap)
			}
			if r.done {
				continue
			}
			limit := invalidWithin
			if r.c.Expect == corpus.Reported || r.c.Expect == corpus.Valid || r.c.Update != nil {
				limit = reportedWithin
			}
			if time.Since(begin) > limit {
				r.done = true
				r.problem = fmt.Sprintf("no outcome within %s; last seen: %s", limit, r.seen)
				continue
			}
			open++
		}
		if open == 0 || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func takeSnapshot(ctx context.Context, env *framework.Env) (*snapshot, error) {
	s := &snapshot{objects: map[string]*unstructured.Unstructured{}, events: map[string][]corev1.Event{}}
	for kind, gvr := range resources {
		list, err := env.Dynamic.Resource(gvr).Namespace(env.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			s.objects[key(kind, list.Items[i].GetName())] = &list.Items[i]
		}
	}
	events, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, e := range events.Items {
		k := key(e.InvolvedObject.Kind, e.InvolvedObject.Name)
		s.events[k] = append(s.events[k], e)
	}
	return s, nil
}

// waitHealthy waits until the healthy cluster is Ready at its generation
// with stores Up TiKV stores.
func waitHealthy(t *testing.T, env *framework.Env, pc versioned.Interface, stores int) {
	t.Helper()
	framework.WaitFor(t, env.Ctx, readyTimeout, fmt.Sprintf("%s Ready with %d TiKV stores", healthyName, stores), func(ctx context.Context) (bool, error) {
		tc, err := pc.PingcapV1alpha1().TidbClusters(env.Namespace).Get(ctx, healthyName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		up := 0
		for _, s := range tc.Status.TiKV.Stores {
			if s.State == "Up" {
				up++
			}
		}
		ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
		framework.Observef(ctx, "generation %d/%d, %d stores up, ready %+v", tc.Status.ObservedGeneration, tc.Generation, up, ready)
		return ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation && up == stores, nil
	})
}

// written lists the objects the operator may write for a cluster, by kind.
func written(ctx context.Context, env *framework.Env) (map[string][]metav1.Object, error) {
	out := map[string][]metav1.Object{}
	var errs []error
	add := func(kind string, items []metav1.Object, err error) {
		errs = append(errs, err)
		out[kind] = items
	}
	k, ns, opts := env.Kube, env.Namespace, metav1.ListOptions{}
	sts, err := k.AppsV1().StatefulSets(ns).List(ctx, opts)
	add("StatefulSet", objects(sts, err, func() []metav1.Object { return ptrs(sts.Items) }), err)
	svc, err := k.CoreV1().Services(ns).List(ctx, opts)
	add("Service", objects(svc, err, func() []metav1.Object { return ptrs(svc.Items) }), err)
	cm, err := k.CoreV1().ConfigMaps(ns).List(ctx, opts)
	add("ConfigMap", objects(cm, err, func() []metav1.Object { return ptrs(cm.Items) }), err)
	dep, err := k.AppsV1().Deployments(ns).List(ctx, opts)
	add("Deployment", objects(dep, err, func() []metav1.Object { return ptrs(dep.Items) }), err)
	sa, err := k.CoreV1().ServiceAccounts(ns).List(ctx, opts)
	add("ServiceAccount", objects(sa, err, func() []metav1.Object { return ptrs(sa.Items) }), err)
	role, err := k.RbacV1().Roles(ns).List(ctx, opts)
	add("Role", objects(role, err, func() []metav1.Object { return ptrs(role.Items) }), err)
	rb, err := k.RbacV1().RoleBindings(ns).List(ctx, opts)
	add("RoleBinding", objects(rb, err, func() []metav1.Object { return ptrs(rb.Items) }), err)
	pvc, err := k.CoreV1().PersistentVolumeClaims(ns).List(ctx, opts)
	add("PersistentVolumeClaim", objects(pvc, err, func() []metav1.Object { return ptrs(pvc.Items) }), err)
	jobs, err := k.BatchV1().Jobs(ns).List(ctx, opts)
	add("Job", objects(jobs, err, func() []metav1.Object { return ptrs(jobs.Items) }), err)
	return out, errors.Join(errs...)
}

func objects[L any](list *L, err error, items func() []metav1.Object) []metav1.Object {
	if err != nil || list == nil {
		return nil
	}
	return items()
}

// ptrs returns a metav1.Object for each element of items.
func ptrs[T any, PT interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}

// checkWrites attributes every object in the namespace to a case by owner
// UID, instance label or name prefix: nothing may be written for a
// rejected or invalid case, and a case declared valid or reported must have
// its StatefulSets.
func checkWrites(t *testing.T, env *framework.Env, results []*result) {
	t.Helper()
	all, err := written(env.Ctx, env)
	if err != nil {
		t.Fatalf("listing written objects: %v", err)
	}
	for _, r := range results {
		var mine []string
		sets := 0
		for kind, objs := range all {
			for _, o := range objs {
				if belongsTo(o, r) {
					mine = append(mine, kind+" "+o.GetName())
					if kind == "StatefulSet" {
						sets++
					}
				}
			}
		}
		sort.Strings(mine)
		builds := corpus.KindOf(r.c) == "TidbCluster"
		if r.c.Update != nil {
			checkUnchanged(r, all)
			continue
		}
		switch {
		case builds && (r.outcome == corpus.Valid || r.outcome == corpus.Reported || r.c.Expect == corpus.Valid || r.c.Expect == corpus.Reported):
			if sets == 0 && r.problem == "" {
				r.problem = fmt.Sprintf("declared %s, but no StatefulSet was written for it", r.c.Expect)
			}
		case len(mine) > 0:
			msg := fmt.Sprintf("written for it (half-applied): %s", strings.Join(mine, ", "))
			if r.problem != "" {
				msg = r.problem + "; " + msg
			}
			r.problem = msg
		}
	}
}

// belongsTo reports whether o was written for r's object.
func belongsTo(o metav1.Object, r *result) bool {
	if r.uid == "" || corpus.KindOf(r.c) == "Backup" || corpus.KindOf(r.c) == "Restore" || corpus.KindOf(r.c) == "BackupSchedule" {
		return false
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.UID == r.uid {
			return true
		}
	}
	if k := corpus.KindOf(r.c); k != "TidbCluster" && k != "DMCluster" {
		// Monitors, dashboards and initializers name their objects after
		// the cluster or add suffixes; their owner reference is the mark.
		return false
	}
	if inst, ok := o.GetLabels()["app.kubernetes.io/instance"]; ok {
		return inst == r.name
	}
	return strings.HasPrefix(o.GetName(), r.name+"-")
}

// report fails each broken case in its own subtest and logs the tally.
func report(t *testing.T, results []*result, took time.Duration) {
	t.Helper()
	tally := map[corpus.Outcome]int{}
	var failing []string
	missing := 0 // reported without writes: a missing TidbCluster, Secret or ConfigMap
	for _, r := range results {
		switch {
		case r.problem != "":
			failing = append(failing, r.c.Name)
		case r.outcome == corpus.Reported && corpus.KindOf(r.c) != "TidbCluster":
			missing++
		default:
			tally[r.outcome]++
		}
	}
	t.Logf("%d cases in %s: %d rejected by the API server, %d reported invalid by the operator, %d reported missing a reference, %d built and reported, %d valid, %d failing",
		len(results), took.Round(time.Second), tally[corpus.Rejected], tally[corpus.Invalid], missing, tally[corpus.Reported], tally[corpus.Valid], len(failing))
	for _, r := range results {
		t.Logf("%-40s %-8s create %4dms  %s", r.c.Name, outcomeOf(r), r.createMS, r.problem)
	}
	for _, r := range results {
		t.Run(r.c.Name, func(t *testing.T) {
			if r.problem != "" {
				t.Errorf("%s (%s, breaks %s): %s", r.c.Why, corpus.KindOf(r.c), r.c.Field, r.problem)
			}
		})
	}
}

func outcomeOf(r *result) string {
	if r.problem != "" {
		return "FAILING"
	}
	return string(r.outcome)
}
