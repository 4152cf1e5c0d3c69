//go:build bench

package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// steady waits until the operator stops writing (leader counts keep
// balancing for a few seconds after the stores come up, and they are part
// of status), then watches an idle window of cfg.Idle.
func (r *round) steady(ctx context.Context) error {
	s := &r.res.Steady
	settleStart := time.Now()
	settleTimeout := 3*time.Minute + time.Duration(r.n)*200*time.Millisecond
	err := poll(ctx, time.Second, settleTimeout, "no operator write for "+r.cfg.Settle.String(), func(context.Context) (bool, error) {
		if _, err := r.audit.Poll(); err != nil {
			return false, err
		}
		last := r.t0
		for _, q := range clusterWrites(r.audit.Between(r.t0, time.Now().Add(time.Hour)), benchPrefix) {
			last = later(last, q.Time)
		}
		return time.Since(last) >= r.cfg.Settle, nil
	})
	s.SettleSeconds = seconds(time.Since(settleStart))
	if err != nil {
		logf("N=%d: %v; measuring the idle window anyway", r.n, err)
	}
	if err := r.countConvergeRequests(time.Now()); err != nil {
		return err
	}
	before := r.proxy.Snapshot()
	st0, err := ReadProcStat(r.op.PID())
	if err != nil {
		return err
	}
	m0, mErr0 := r.op.Metrics(ctx)
	from := time.Now()
	logf("N=%d: idle window of %v", r.n, r.cfg.Idle)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(r.cfg.Idle):
	}
	to := time.Now()
	ext := diffCounts(before, r.proxy.Snapshot())
	st1, err := ReadProcStat(r.op.PID())
	if err != nil {
		return err
	}
	if _, err := r.audit.Poll(); err != nil {
		return err
	}
	minutes := to.Sub(from).Minutes()
	reqs := r.audit.Between(from, to)
	writes := clusterWrites(reqs, benchPrefix)
	leases := filter(reqs, isLease)
	gets := filter(reqs, func(q Request) bool { return q.Verb == "get" && !isLease(q) })
	other := filter(reqs, func(q Request) bool {
		return !isLease(q) && q.Verb != "get" && (!isWrite(q.Verb) || !strings.HasPrefix(q.Namespace, benchPrefix))
	})
	s.WindowSeconds = seconds(to.Sub(from))
	s.ClusterWrites = len(writes)
	s.ClusterWritesByVerb = countBy(writes)
	s.WritesPerClusterMin = round2(float64(len(writes)) / float64(r.n) / minutes)
	s.LeasePerMinute = round2(float64(len(leases)) / minutes)
	s.LeaseByVerb = countBy(leases)
	s.UncachedGets = len(gets)
	s.UncachedGetsByRes = countBy(gets)
	s.OtherRequests = countBy(other)
	s.ExternalPerClusterMin = round2(float64(total(ext)) / float64(r.n) / minutes)
	s.ByComponentPerClusterMin = perClusterMinute(byComponent(ext), r.n, minutes)
	s.ByPathPerClusterMin = perClusterMinute(byPath(ext), r.n, minutes)
	s.CPUSecondsPerMinute = round2((st1.CPUSeconds - st0.CPUSeconds) / minutes)
	if m1, mErr1 := r.op.Metrics(ctx); mErr0 == nil && mErr1 == nil {
		syncs := reconciles(m1) - reconciles(m0)
		s.SyncsPerClusterMin = round2(syncs / float64(r.n) / minutes)
		s.CPUMsPerSync = round2(1000 * ratio(st1.CPUSeconds-st0.CPUSeconds, syncs))
	}
	return nil
}

// reconciles is the TidbCluster controller's syncs so far, whatever their
// result.
func reconciles(m map[string]float64) float64 {
	return sumMetric(m, "controller_runtime_reconcile_total", `controller="tidbcluster"`)
}

func perClusterMinute(c map[string]int, n int, minutes float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range c {
		out[k] = round2(float64(v) / float64(n) / minutes)
	}
	return out
}

func (r *round) reaction(ctx context.Context) error {
	lat, err := measureReaction(ctx, r.pc, r.replicas, r.namespaces, clusterName, r.cfg.K)
	r.res.Reaction = summarize(lat)
	return err
}

// cacheResources maps the resources the operator's informers list to their
// API group and version, to count what they cache.
var cacheResources = map[string]schema.GroupVersion{
	"pods": {Version: "v1"}, "services": {Version: "v1"}, "configmaps": {Version: "v1"},
	"persistentvolumeclaims": {Version: "v1"}, "serviceaccounts": {Version: "v1"}, "secrets": {Version: "v1"},
	"events": {Version: "v1"}, "nodes": {Version: "v1"}, "persistentvolumes": {Version: "v1"},
	"statefulsets": {Group: "apps", Version: "v1"}, "deployments": {Group: "apps", Version: "v1"},
	"roles": {Group: "rbac.authorization.k8s.io", Version: "v1"}, "rolebindings": {Group: "rbac.authorization.k8s.io", Version: "v1"},
	"tidbclusters": {Group: "pingcap.com", Version: "v1alpha1"}, "backups": {Group: "pingcap.com", Version: "v1alpha1"},
	"restores": {Group: "pingcap.com", Version: "v1alpha1"}, "backupschedules": {Group: "pingcap.com", Version: "v1alpha1"},
	"jobs": {Group: "batch", Version: "v1"}, "storageclasses": {Group: "storage.k8s.io", Version: "v1"},
	"tidbinitializers": {Group: "pingcap.com", Version: "v1alpha1"}, "tidbmonitors": {Group: "pingcap.com", Version: "v1alpha1"},
	"tidbdashboards": {Group: "pingcap.com", Version: "v1alpha1"}, "tidbngmonitorings": {Group: "pingcap.com", Version: "v1alpha1"},
	"compactbackups": {Group: "pingcap.com", Version: "v1alpha1"}, "dmclusters": {Group: "pingcap.com", Version: "v1alpha1"},
}

// cost reads the operator's CPU and memory, and counts its informer
// caches by listing what each of its informers lists (resource and label
// selector, from the audit log), then stops the operator.
func (r *round) cost(ctx context.Context) error {
	c := &r.res.Cost
	st, err := ReadProcStat(r.op.PID())
	if err != nil {
		return err
	}
	c.CPUSecondsTotal = round2(st.CPUSeconds)
	c.PeakRSSMiB, c.RSSMiB = mib(st.PeakRSSBytes), mib(st.RSSBytes)
	if m, err := r.op.Metrics(ctx); err == nil {
		c.HeapInuseMiB = mib(int64(sumMetric(m, "go_memstats_heap_inuse_bytes")))
	}
	if _, err := r.audit.Poll(); err != nil {
		return err
	}
	c.Informers = listWatches(r.audit.Between(time.Time{}, time.Now().Add(time.Hour)))
	meta, err := metadata.NewForConfig(r.restCfg)
	if err != nil {
		return err
	}
	c.CacheObjects = map[string]int{}
	for _, inf := range c.Informers {
		if inf.Watches == 0 { // a one-off list, not an informer
			continue
		}
		gv, ok := cacheResources[inf.Resource]
		if !ok {
			return fmt.Errorf("informer on %s: resource not mapped", inf.Resource)
		}
		// The operator's own custom resources are filtered by --selector
		// only, which is empty by default: every TidbCluster is its business.
		if inf.LabelSelector == "" && gv.Group != "pingcap.com" {
			c.UnfilteredInformers = append(c.UnfilteredInformers, inf.Resource+" in "+inf.Namespace)
		}
		ns := inf.Namespace
		if ns == "*" {
			ns = ""
		}
		l, err := meta.Resource(gv.WithResource(inf.Resource)).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: inf.LabelSelector})
		if err != nil {
			return fmt.Errorf("list %s: %w", inf.Resource, err)
		}
		c.CacheObjects[inf.Resource] += len(l.Items)
		c.CacheTotal += len(l.Items)
	}
	err = r.op.Stop(20 * time.Second)
	r.res.Convergence.ThrottleLogs = countLogLines(r.op.LogPath, "Waited before sending request")["Waited before sending request"]
	return err
}

// raw runs the baselines with the operator stopped, each in namespaces of
// its own: all objects at once, then in the TiDB Operator's order.
func (r *round) raw(ctx context.Context) error {
	if !r.cfg.Raw {
		return nil
	}
	res, err := r.replay(ctx, rawPrefix, runRaw)
	r.res.Raw = &res
	r.res.RatioToRaw = ratio(r.res.Convergence.TotalS, res.ReadySeconds)
	if err != nil {
		return err
	}
	gated, err := r.replay(ctx, gatedPrefix, runRawGated)
	r.res.RawGated = &gated
	r.res.RatioToGated = ratio(r.res.Convergence.TotalS, gated.ReadySeconds)
	return err
}

// replay runs one baseline in N new namespaces named with prefix and
// measures the machine's load meanwhile.
func (r *round) replay(ctx context.Context, prefix string,
	run func(context.Context, *rest.Config, []*unstructured.Unstructured, []string) (RawResult, error)) (RawResult, error) {
	var namespaces []string
	for i := range r.n {
		namespaces = append(namespaces, namespaceName(prefix, i))
	}
	if err := createNamespaces(ctx, r.kube, namespaces); err != nil {
		return RawResult{}, err
	}
	pids := r.pids() // the operator has stopped
	mark0, err := markCPU(pids)
	if err != nil {
		return RawResult{}, err
	}
	res, err := run(ctx, r.restCfg, r.objs, namespaces)
	if mark1, mErr := markCPU(pids); mErr == nil {
		res.Load = loadBetween(mark0, mark1, r.res.machineCores)
	}
	return res, err
}
