//go:build bench

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/label"
)

// The TiDB Operator's order, as the stages of a gated replay: discovery and
// PD first; TiKV, TiFlash, Pump and TiProxy once PD is available; TiDB and
// TiCDC once TiKV (and Pump) are.
const (
	stagePD = iota
	stageStores
	stageSQL
	stages
)

// stageOf returns the stage that creates o, read from its component label.
func stageOf(o *unstructured.Unstructured) int {
	switch o.GetLabels()[label.ComponentLabelKey] {
	case label.DiscoveryLabelVal, label.PDLabelVal:
		return stagePD
	case label.TiDBLabelVal, label.TiCDCLabelVal:
		return stageSQL
	default:
		return stageStores
	}
}

// gatesOf returns, for each stage, the StatefulSets of earlier stages that
// must have a Ready pod before it starts: the PD StatefulSet before the
// stores, the TiKV and Pump ones before TiDB and TiCDC. The floor takes the
// weakest form of each gate (one Ready pod, no PD or store API), so that no
// operator keeping the order can be faster.
func gatesOf(objs []*unstructured.Unstructured) [stages][]string {
	var g [stages][]string
	for _, o := range objs {
		if o.GetKind() != "StatefulSet" {
			continue
		}
		switch o.GetLabels()[label.ComponentLabelKey] {
		case label.PDLabelVal:
			g[stageStores] = append(g[stageStores], o.GetName())
		case label.TiKVLabelVal, label.PumpLabelVal:
			g[stageSQL] = append(g[stageSQL], o.GetName())
		}
	}
	return g
}

// gatedReplay is the state of a gated replay: the next stage of each
// namespace, and whether that stage's creates are in flight.
type gatedReplay struct {
	env      *rawEnv
	byStage  [stages][]*unstructured.Unstructured
	gates    [stages][]string
	slots    chan struct{} // creates in flight, all namespaces together
	ctx      context.Context
	mu       sync.Mutex
	next     map[string]int
	inFlight map[string]bool
	created  sync.WaitGroup
	errOnce  sync.Once
	err      error
	cancel   context.CancelFunc
	lastDone time.Time
	stopped  bool // no stage starts any more (the replay is over)
}

// runRawGated replays objs as runRaw does, but in the TiDB Operator's order
// within each namespace (stageOf), each namespace on its own: the floor of
// any operator that keeps the order, as runRaw's is of one that does not.
func runRawGated(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, namespaces []string) (RawResult, error) {
	env, err := newRawEnv(cfg, namespaces)
	if err != nil {
		return RawResult{}, err
	}
	defer close(env.stop)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &gatedReplay{env: env, gates: gatesOf(objs), slots: make(chan struct{}, 128), ctx: ctx,
		next: map[string]int{}, inFlight: map[string]bool{}, cancel: cancel}
	for _, o := range objs {
		g.byStage[stageOf(o)] = append(g.byStage[stageOf(o)], o)
	}
	wake := func(obj interface{}) {
		if s, ok := obj.(*appsv1.StatefulSet); ok && env.want[s.Namespace] {
			g.advance(s.Namespace)
		}
	}
	if _, err := env.sets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: wake, UpdateFunc: func(_, obj interface{}) { wake(obj) },
	}); err != nil {
		return RawResult{}, err
	}
	env.start()
	start := time.Now()
	for _, ns := range namespaces {
		g.advance(ns)
	}
	err = env.waitReady(ctx, objs)
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	g.created.Wait()
	if g.err != nil {
		err = g.err
	}
	res := RawResult{Objects: len(objs) * len(namespaces), ReadySeconds: seconds(time.Since(start))}
	g.mu.Lock()
	res.CreateSeconds = seconds(g.lastDone.Sub(start))
	g.mu.Unlock()
	return res, err
}

// advance starts the next stage of ns when its gate is open and nothing of
// ns is in flight; it is called on every StatefulSet event of ns and when a
// stage's creates are answered.
func (g *gatedReplay) advance(ns string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.next[ns]
	if g.stopped || s >= stages || g.inFlight[ns] || !g.open(ns, s) {
		return
	}
	g.next[ns] = s + 1
	if len(g.byStage[s]) == 0 {
		go g.advance(ns)
		return
	}
	g.inFlight[ns] = true
	g.created.Add(1)
	go g.createStage(ns, s)
}

// open reports whether every StatefulSet gating stage s of ns has a Ready pod.
func (g *gatedReplay) open(ns string, s int) bool {
	for _, name := range g.gates[s] {
		o, ok, _ := g.env.sets.GetStore().GetByKey(ns + "/" + name)
		if !ok || o.(*appsv1.StatefulSet).Status.ReadyReplicas < 1 {
			return false
		}
	}
	return true
}

// createStage creates stage s's objects in ns, in parallel within the
// replay's 128 slots, then lets ns go on.
func (g *gatedReplay) createStage(ns string, s int) {
	defer g.created.Done()
	var wg sync.WaitGroup
	for _, o := range g.byStage[s] {
		wg.Add(1)
		g.slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-g.slots }()
			if err := g.env.create(g.ctx, ns, o); err != nil {
				g.errOnce.Do(func() { g.err = fmt.Errorf("stage %d: %w", s, err); g.cancel() })
			}
		}()
	}
	wg.Wait()
	g.mu.Lock()
	g.inFlight[ns] = false
	g.lastDone = time.Now()
	g.mu.Unlock()
	g.advance(ns)
}
