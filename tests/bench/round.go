//go:build bench

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	pcinformers "github.com/kubetidb/tidb-operator/pkg/client/informers/externalversions"
)

// Namespace prefixes: the operator's clusters and the raw baseline's copies.
const (
	benchPrefix = "bench"
	rawPrefix   = "raw"
	gatedPrefix = "rawg"
	clusterName = "db"
)

// round is one N on a fresh control plane: the processes, clients and
// watchers it uses and the result it fills.
type round struct {
	cfg   Config
	shape string // BENCH_SHAPE's name of the clusters' shape
	n     int
	dir   string
	log   *os.File
	res   *Round

	cp         *ControlPlane
	restCfg    *rest.Config
	kube       kubernetes.Interface
	pc         versioned.Interface
	audit      *AuditLog
	proxy      *CountingProxy
	sim        *Process
	op         *Operator
	tc         *v1alpha1.TidbCluster // the shape every cluster is created from
	objs       []*unstructured.Unstructured
	namespaces []string
	ready      *ReadyTracker
	replicas   *ReplicaWatcher
	volumes    *VolumeBinder
	stopInf    chan struct{}
	stopVols   context.CancelFunc

	t0, tReady time.Time        // clusters created; all Ready
	cpuStart   float64          // operator CPU seconds at t0
	ext0       map[ProxyKey]int // PD/TiKV/TiFlash/TiDB requests counted before t0
}

// runRound measures one N of one shape and always tears its control plane
// down.
func runRound(ctx context.Context, cfg Config, shape string, n int, dir string) *Round {
	r := &round{cfg: cfg, shape: shape, n: n, dir: dir,
		res: &Round{N: n, Shape: shape, Namespaces: "one per cluster", machineCores: runtime.NumCPU()}}
	var errs []error
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.res.Error = err.Error()
		return r.res
	}
	log, err := os.Create(filepath.Join(dir, "harness.log"))
	if err != nil {
		r.res.Error = err.Error()
		return r.res
	}
	r.log = log
	defer func() { _ = log.Close() }()
	steps := []struct {
		name  string
		fatal bool
		run   func(context.Context) error
	}{
		{"start control plane", true, r.startControlPlane},
		{"start simulator and operator", true, r.startProcesses},
		{"create namespaces", true, r.setupNamespaces},
		{"convergence", true, r.converge},
		{"steady state", true, r.steady},
		{"reaction latency", false, r.reaction},
		{"operator cost", false, r.cost},
		{"raw API baseline", false, r.raw},
	}
	for _, s := range steps {
		logf("N=%d: %s", n, s.name)
		if err := s.run(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
			logf("N=%d: %s failed: %v", n, s.name, err)
			if s.fatal || ctx.Err() != nil {
				break
			}
		}
	}
	r.teardown()
	if err := errors.Join(errs...); err != nil {
		r.res.Error = err.Error()
	}
	return r.res
}

func (r *round) startControlPlane(ctx context.Context) error {
	tc, raw, err := loadShape(r.shape)
	if err != nil {
		return err
	}
	r.tc = tc
	r.res.PodsPerCluster = podsPerCluster(tc)
	r.res.StoresPerCluster = storesPerCluster(tc)
	shapeFile := filepath.Join(r.dir, "shape.yaml")
	if err := os.WriteFile(shapeFile, raw, 0o644); err != nil {
		return err
	}
	if r.objs, err = renderObjects(ctx, r.cfg.operatorBin(), shapeFile); err != nil {
		return err
	}
	pods := 2*r.n*podsPerCluster(tc) + r.cfg.K
	r.cp, err = StartControlPlane(ctx, r.cfg.Repo, filepath.Join(r.dir, "cluster"), pods, r.log)
	if err != nil {
		return err
	}
	if r.restCfg, err = clientcmd.BuildConfigFromFlags("", r.cp.Kubeconfig); err != nil {
		return err
	}
	r.restCfg.QPS, r.restCfg.Burst = 500, 1000 // the harness must not be the bottleneck
	if r.kube, err = kubernetes.NewForConfig(r.restCfg); err != nil {
		return err
	}
	if r.pc, err = versioned.NewForConfig(r.restCfg); err != nil {
		return err
	}
	r.audit = NewAuditLog(r.cp.AuditLog)
	return nil
}

// startProcesses starts the simulator, the counting proxy in front of it,
// and the operator, and waits until the operator is ready.
func (r *round) startProcesses(ctx context.Context) error {
	simAddr, err := freeAddr()
	if err != nil {
		return err
	}
	r.sim, err = StartProcess("tidb-simulator", r.cfg.simulatorBin(), filepath.Join(r.dir, "simulator.log"), nil,
		"--listen="+simAddr, "--kubeconfig="+r.cp.Kubeconfig)
	if err != nil {
		return err
	}
	err = poll(ctx, 100*time.Millisecond, time.Minute, "simulator healthz", func(ctx context.Context) (bool, error) {
		code, _, err := httpGet(ctx, "http://"+simAddr+"/sim/v1/healthz")
		return err == nil && code == 200, nil
	})
	if err != nil {
		return err
	}
	if r.proxy, err = StartCountingProxy("http://"+simAddr, benchPrefix); err != nil {
		return err
	}
	if err := createNamespaces(ctx, r.kube, []string{operatorNamespace}); err != nil {
		return err
	}
	start := time.Now()
	r.op, err = StartOperator(r.cfg.operatorBin(), r.cp.OperatorKubeconfig, r.proxy.URL(),
		filepath.Join(r.dir, "operator.log"), r.cfg.OperatorFlags, r.cfg.OperatorEnv)
	if err != nil {
		return err
	}
	if err := r.op.WaitReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	r.res.OperatorStartupSeconds = seconds(time.Since(start))
	st, err := ReadProcStat(r.op.PID())
	r.res.Cost.CPUSecondsStartup = round2(st.CPUSeconds)
	return err
}

// setupNamespaces creates the clusters' namespaces and starts the
// harness's own watchers, before the clock starts.
func (r *round) setupNamespaces(ctx context.Context) error {
	for i := range r.n {
		r.namespaces = append(r.namespaces, namespaceName(benchPrefix, i))
	}
	if err := createNamespaces(ctx, r.kube, r.namespaces); err != nil {
		return err
	}
	r.stopInf = make(chan struct{})
	pcf := pcinformers.NewSharedInformerFactory(r.pc, 0)
	kf := informers.NewSharedInformerFactoryWithOptions(r.kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = managedBy }))
	var err error
	if r.ready, err = NewReadyTracker(pcf.Pingcap().V1alpha1().TidbClusters().Informer()); err != nil {
		return err
	}
	if r.replicas, err = NewReplicaWatcher(kf.Apps().V1().StatefulSets().Informer()); err != nil {
		return err
	}
	vf := informers.NewSharedInformerFactory(r.kube, 0) // every claim, the raw baseline's too
	if r.volumes, err = NewVolumeBinder(r.kube, vf.Core().V1().PersistentVolumeClaims().Informer()); err != nil {
		return err
	}
	pcf.Start(r.stopInf)
	kf.Start(r.stopInf)
	vf.Start(r.stopInf)
	pcf.WaitForCacheSync(r.stopInf)
	kf.WaitForCacheSync(r.stopInf)
	vf.WaitForCacheSync(r.stopInf)
	var volCtx context.Context
	volCtx, r.stopVols = context.WithCancel(context.WithoutCancel(ctx))
	r.volumes.Run(volCtx, volumeWorkers)
	return nil
}

// volumeWorkers is how many claims the harness binds at once.
const volumeWorkers = 8

// converge creates the N clusters and waits until every one is Ready.
func (r *round) converge(ctx context.Context) error {
	if _, err := r.audit.Poll(); err != nil {
		return err
	}
	st, err := ReadProcStat(r.op.PID())
	if err != nil {
		return err
	}
	r.cpuStart = st.CPUSeconds
	m0, err := r.op.Metrics(ctx)
	if err != nil {
		return err
	}
	depth := r.op.SampleDepth(ctx, time.Second)
	mark0, err := markCPU(r.pids())
	if err != nil {
		return err
	}
	api0, err := r.apiserverRequests(ctx)
	if err != nil {
		return err
	}
	r.ext0 = r.proxy.Snapshot()
	r.t0 = time.Now()
	sent, err := createClusters(ctx, r.pc, r.tc, r.namespaces)
	if err != nil {
		depth.Stop()
		return err
	}
	timeout := r.cfg.ConvergeTimeout + time.Duration(r.n)*time.Second
	err = poll(ctx, 200*time.Millisecond, timeout, "all clusters Ready", func(context.Context) (bool, error) {
		if exited, err := r.op.Exited(); exited {
			return false, fmt.Errorf("operator exited: %w", err)
		}
		return r.ready.Count() >= r.n, nil
	})
	c := &r.res.Convergence
	if mark1, err := markCPU(r.pids()); err == nil {
		c.Load = loadBetween(mark0, mark1, r.res.machineCores)
	}
	if api1, err := r.apiserverRequests(ctx); err == nil {
		c.APIServerRequests = int(api1 - api0)
	}
	c.MaxQLen = depth.Stop()
	c.Ready = r.ready.Count()
	ext := diffCounts(r.ext0, r.proxy.Snapshot())
	c.ExternalPerCluster = round2(float64(total(ext)) / float64(r.n))
	c.ExternalByComponent = perCluster(byComponent(ext), r.n)
	c.ExternalByPath = perCluster(byPath(ext), r.n)
	var lat []time.Duration
	for key, at := range sent {
		if done, ok := r.ready.Ready(key); ok {
			lat = append(lat, done.Sub(at))
			r.tReady = later(r.tReady, done)
		}
	}
	c.PerTC = summarize(lat)
	c.TotalS = seconds(r.tReady.Sub(r.t0))
	if err != nil {
		return err
	}
	m1, mErr := r.op.Metrics(ctx)
	if mErr == nil {
		per := func(result string) float64 {
			d := sumMetric(m1, "controller_runtime_reconcile_total", `controller="tidbcluster"`, `result="`+result+`"`) -
				sumMetric(m0, "controller_runtime_reconcile_total", `controller="tidbcluster"`, `result="`+result+`"`)
			return round2(d / float64(r.n))
		}
		c.Syncs = per("success") + per("requeue") + per("error")
		c.Waits, c.Errors = per("requeue"), per("error")
	}
	st, err = ReadProcStat(r.op.PID())
	if err != nil {
		return err
	}
	r.res.Cost.CPUSecondsConverge = round2(st.CPUSeconds - r.cpuStart)
	return nil
}

// apiserverRequests reads how many requests kube-apiserver has served, from
// every client: the operator is one of several (the StatefulSet and
// Deployment controllers, the scheduler and KWOK write far more per pod).
func (r *round) apiserverRequests(ctx context.Context) (float64, error) {
	body, err := r.kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("apiserver /metrics: %w", err)
	}
	return sumMetric(parseMetrics(string(body)), "apiserver_request_total"), nil
}

// pids are the bench's own processes: control plane, simulator, operator
// and the harness itself.
func (r *round) pids() map[string]int {
	pids := map[string]int{"harness": os.Getpid()}
	controlPlanePIDs(r.cp.stateDir, pids)
	if r.sim != nil {
		pids["tidb-simulator"] = r.sim.PID()
	}
	if r.op != nil {
		if exited, _ := r.op.Exited(); !exited {
			pids["tidb-controller-manager"] = r.op.PID()
		}
	}
	return pids
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// countConvergeRequests reads the audit log from the first create until
// quiet: the operator's Events are sent by a background broadcaster through
// the same throttled client and keep draining after the last cluster is
// Ready, and late status writes (leader counts balancing) belong to
// converging too. Nothing but Lease renewals happens while it is quiet.
func (r *round) countConvergeRequests(quiet time.Time) error {
	if _, err := r.audit.Poll(); err != nil {
		return err
	}
	all := r.audit.Between(r.t0, quiet)
	reqs := filter(all, func(q Request) bool { return !isLease(q) })
	n := float64(r.n)
	perN := func(keep func(Request) bool) float64 { return round2(float64(len(filter(reqs, keep))) / n) }
	q := &r.res.Requests
	q.PerCluster = perN(func(Request) bool { return true })
	q.UntilReadyPerCluster = perN(func(q Request) bool { return q.Time.Before(r.tReady.Add(time.Millisecond)) })
	q.WritesPerCluster = perN(func(q Request) bool { return isWrite(q.Verb) && !isEvent(q) })
	q.EventsPerCluster = perN(func(q Request) bool { return isWrite(q.Verb) && isEvent(q) })
	q.GetsPerCluster = perN(func(q Request) bool { return q.Verb == "get" })
	q.ByVerbResource = perCluster(countBy(reqs), r.n)
	q.V1Minimum = v1Minimum(r.tc)
	q.RatioToV1Minimum = ratio(q.PerCluster, float64(q.V1Minimum.Total()))
	q.Conflicts = conflicts(all)
	untilReady := r.audit.Between(r.t0, r.tReady.Add(time.Millisecond))
	r.res.Convergence.PeakRPS = peakRate(untilReady)
	r.res.Convergence.OperatorShare = ratio(float64(len(untilReady)), float64(r.res.Convergence.APIServerRequests))
	return nil
}

func (r *round) teardown() {
	if r.op != nil {
		if err := r.op.Stop(20 * time.Second); err != nil {
			logf("stop operator: %v", err)
		}
		r.res.Convergence.ThrottleLogs = countLogLines(r.op.LogPath, "Waited before sending request")["Waited before sending request"]
	}
	if r.sim != nil {
		_ = r.sim.Stop(10 * time.Second)
	}
	if r.proxy != nil {
		_ = r.proxy.Close()
	}
	if r.stopVols != nil {
		r.stopVols()
		r.volumes.Wait()
	}
	if r.stopInf != nil {
		close(r.stopInf)
	}
	if r.cp != nil {
		if err := r.cp.Stop(r.log, r.dir); err != nil {
			logf("stop control plane: %v", err)
		}
	}
}
