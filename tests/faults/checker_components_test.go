//go:build integration

package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// The invariants of the components beyond PD and TiKV.
const (
	// invTiFlashTombstone: no TiFlash pod is removed (deleted beyond the StatefulSet's replicas, or the
	// StatefulSet scaled below its ordinal) before PD reports its store (engine=tiflash) Tombstone.
	invTiFlashTombstone invariant = "tiflash-tombstone-first"
	// invTiCDCDrained: a TiCDC pod whose capture replicates tables, while other captures exist, is
	// deleted (restarted or removed) only once the operator asked TiCDC to drain that capture, and,
	// if it was the owner, to resign the owner role.
	invTiCDCDrained invariant = "ticdc-drained-before-restart"
	// invPumpOffline: a Pump pod beyond the StatefulSet's replicas is removed only after the operator's
	// offline request for its pump (or once the registry says it is offline, or it never registered).
	invPumpOffline invariant = "pump-offline-first"
	// invTiProxyOneDown: during a TiProxy rollout, never two of the wanted TiProxy pods are missing,
	// not Ready or deleting at once.
	invTiProxyOneDown invariant = "tiproxy-one-down"
)

// compState is what the checker records for the component invariants: the operator's TiCDC and Pump
// requests (seen by the suite's proxy) and the captures and pumps of the last poll. Guarded by checker.mu.
type compState struct {
	drained  map[string]bool // capture IDs the operator asked TiCDC to drain
	resigns  int             // owner resign requests of the operator
	offline  map[string]bool // pods whose pump the operator asked to go offline
	captures map[string]api.Capture
	pumps    map[string]api.PumpNode
	// user are the pods the scenario itself deleted: their deletion is not the operator's.
	user map[types.UID]bool
	pods cache.Indexer
}

func newCompState() *compState {
	return &compState{drained: map[string]bool{}, offline: map[string]bool{}, captures: map[string]api.Capture{},
		pumps: map[string]api.PumpNode{}, user: map[types.UID]bool{}}
}

// addComponentHandlers registers the TiProxy pod handler; called by start before the informers start.
func (c *checker) addComponentHandlers(ctx context.Context, f informers.SharedInformerFactory) error {
	pods := f.Core().V1().Pods().Informer()
	c.comp.pods = pods.GetIndexer()
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onTiProxyPod(obj) },
		UpdateFunc: func(_, obj any) { c.onTiProxyPod(obj) },
		DeleteFunc: func(obj any) { c.onTiProxyPod(obj) },
	})
	if err != nil {
		return fmt.Errorf("add the TiProxy handler: %w", err)
	}
	return c.addJobHandler(f)
}

// userDeleted records that the scenario itself deletes pod uid (call it before the deletion).
func (c *checker) userDeleted(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.comp.user[uid] = true
}

// beforeWrite sees every non-GET request of the operator before it is forwarded.
func (c *checker) beforeWrite(r *http.Request) {
	c.beforePDWrite(r)
	c.recordComponentWrite(r)
}

// recordComponentWrite records the operator's drain, resign and pump offline requests.
func (c *checker) recordComponentWrite(r *http.Request) {
	switch {
	case r.Method == http.MethodPut && r.URL.Path == ticdcapi.PathDrain:
		body, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			CaptureID string `json:"capture_id"`
		}
		if err == nil && json.Unmarshal(body, &req) == nil {
			c.mu.Lock()
			c.comp.drained[req.CaptureID] = true
			c.mu.Unlock()
		}
	case r.Method == http.MethodPost && r.URL.Path == ticdcapi.PathResign:
		c.mu.Lock()
		c.comp.resigns++
		c.mu.Unlock()
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/state/") && strings.HasSuffix(r.URL.Path, "/close"):
		node := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/state/"), "/close")
		pod, _, _ := strings.Cut(node, ":")
		pod, _, _ = strings.Cut(pod, ".")
		c.mu.Lock()
		c.comp.offline[pod] = true
		c.mu.Unlock()
	}
}

// onComponentPod judges a TiFlash, TiCDC or Pump pod the first time it is seen deleting.
func (c *checker) onComponentPod(ctx context.Context, pod *corev1.Pod, component string, ord int32) {
	c.mu.Lock()
	user := c.comp.user[pod.UID]
	c.mu.Unlock()
	replicas := c.replicas(component)
	switch component {
	case "tiflash":
		if ord < replicas {
			return
		}
		st, err := c.state(ctx)
		if err != nil {
			return
		}
		store := liveStore(st, pod.Name)
		c.check(invTiFlashTombstone, store == nil, "TiFlash pod %s (ordinal %d, replicas %d) deleted while its store is %s",
			pod.Name, ord, replicas, stateOf(store))
	case "ticdc":
		c.mu.Lock()
		cp, found := c.comp.captures[pod.Name]
		others := len(c.comp.captures) - 1
		ok := user || !found || others < 1 || cp.Tables == 0 || (c.comp.drained[cp.ID] && (!cp.Owner || c.comp.resigns > 0))
		drained, resigns := c.comp.drained[cp.ID], c.comp.resigns
		c.mu.Unlock()
		c.check(invTiCDCDrained, ok, "TiCDC pod %s deleted while its capture %s (owner %v) held %d tables beside %d other captures; drain asked %v, resigns %d",
			pod.Name, cp.ID, cp.Owner, cp.Tables, others, drained, resigns)
	case "pump":
		if ord < replicas {
			return
		}
		c.check(invPumpOffline, user || c.pumpMayGo(pod.Name), "Pump pod %s (ordinal %d, replicas %d) deleted before the operator took its pump offline (%s)",
			pod.Name, ord, replicas, c.pumpOf(pod.Name))
	}
}

// pumpMayGo: the operator asked pod's pump to go offline, or the registry says offline, or it has none.
func (c *checker) pumpMayGo(pod string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, registered := c.comp.pumps[pod]
	return c.comp.offline[pod] || !registered || n.State == "offline"
}

func (c *checker) pumpOf(pod string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.comp.pumps[pod]; ok {
		return fmt.Sprintf("registry %s, process %q", n.State, n.ProcessState)
	}
	return "not registered"
}

// onComponentSTS judges a TiFlash or Pump scale-down: every removed ordinal's store must be Tombstone,
// its pump asked offline.
func (c *checker) onComponentSTS(ctx context.Context, old, sts *appsv1.StatefulSet) {
	component := strings.TrimPrefix(sts.Name, c.tc+"-")
	if (component != "tiflash" && component != "pump") || old.Spec.Replicas == nil || sts.Spec.Replicas == nil ||
		*sts.Spec.Replicas >= *old.Spec.Replicas {
		return
	}
	st, err := c.state(ctx)
	if err != nil {
		return
	}
	for ord := *sts.Spec.Replicas; ord < *old.Spec.Replicas; ord++ {
		pod := fmt.Sprintf("%s-%d", sts.Name, ord)
		if component == "pump" {
			c.check(invPumpOffline, c.pumpMayGo(pod), "StatefulSet %s scaled %d→%d before the operator took the pump of %s offline (%s)",
				sts.Name, *old.Spec.Replicas, *sts.Spec.Replicas, pod, c.pumpOf(pod))
			continue
		}
		store := liveStore(st, pod)
		c.check(invTiFlashTombstone, store == nil, "StatefulSet %s scaled %d→%d while the store of %s is %s",
			sts.Name, *old.Spec.Replicas, *sts.Spec.Replicas, pod, stateOf(store))
	}
}

// pollComponents records the captures and pumps, and judges TiFlash stores whose pod is gone.
func (c *checker) pollComponents(ctx context.Context) {
	st, err := c.state(ctx)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.comp.captures = map[string]api.Capture{}
	for _, cp := range st.Captures {
		c.comp.captures[cp.PodName] = cp
	}
	for _, p := range st.PumpNodes {
		c.comp.pumps[p.PodName] = p
	}
	c.mu.Unlock()
	replicas := c.replicas("tiflash")
	if replicas < 0 {
		return
	}
	for _, s := range st.Stores {
		ord, err := names.Ordinal(s.PodName)
		if s.Engine != "tiflash" || err != nil || ord < replicas || s.StateName == "Tombstone" {
			continue
		}
		_, err = c.env.Kube.CoreV1().Pods(c.env.Namespace).Get(ctx, s.PodName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || ctx.Err() != nil {
			continue
		}
		if now, err := c.state(ctx); err == nil {
			store := liveStore(now, s.PodName)
			c.check(invTiFlashTombstone, store == nil || store.ID != s.ID, "TiFlash pod %s is gone while its store %d is %s", s.PodName, s.ID, stateOf(store))
		}
	}
}

// onTiProxyPod: while the TiProxy StatefulSet rolls to a new revision, at most one wanted pod is
// missing, not Ready or deleting. Pods the scenario deleted itself are not the operator's doing.
func (c *checker) onTiProxyPod(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels["app.kubernetes.io/component"] != "tiproxy" {
		return
	}
	o, found, _ := c.sts.GetByKey(c.env.Namespace + "/" + c.tc + "-tiproxy")
	if !found {
		return
	}
	sts := o.(*appsv1.StatefulSet)
	if sts.Spec.Replicas == nil || sts.Status.CurrentRevision == sts.Status.UpdateRevision {
		return
	}
	byName := map[string]*corev1.Pod{}
	for _, p := range c.comp.pods.List() {
		if p := p.(*corev1.Pod); p.Labels["app.kubernetes.io/component"] == "tiproxy" {
			byName[p.Name] = p
		}
	}
	c.mu.Lock()
	user := c.comp.user
	var down []string
	for ord := int32(0); ord < *sts.Spec.Replicas; ord++ {
		name := fmt.Sprintf("%s-%d", sts.Name, ord)
		p := byName[name]
		switch {
		case p == nil:
			down = append(down, name+" missing")
		case user[p.UID]:
		case p.DeletionTimestamp != nil:
			down = append(down, name+" deleting")
		case !podReady(p):
			down = append(down, name+" not Ready")
		}
	}
	c.mu.Unlock()
	sort.Strings(down)
	c.checkKeyed(invTiProxyOneDown, len(down) <= 1, strings.Join(down, ","), "%d TiProxy pods down at once during the rollout to %s: %v",
		len(down), sts.Status.UpdateRevision, down)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
