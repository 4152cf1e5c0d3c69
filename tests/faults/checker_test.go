//go:build integration

package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	simclient "github.com/kubetidb/tidb-operator/pkg/simulator/client"
	"github.com/kubetidb/tidb-operator/tests/framework"
)

// invariant names one safety property the checker asserts for the whole of a scenario.
type invariant string

const (
	// invPDQuorum: the operator never deletes a PD member (checked on the request, before PD gets it)
	// or a PD pod when that leaves fewer healthy members than a quorum.
	invPDQuorum invariant = "pd-quorum"
	// invTiKVTombstone: no TiKV pod is removed (deleted beyond the StatefulSet's replicas, or the
	// StatefulSet scaled below its ordinal) before PD reports its store Tombstone.
	invTiKVTombstone invariant = "tikv-tombstone-first"
	// invTiKVOthersUp: a TiKV pod is restarted only while every other wanted store is Up.
	invTiKVOthersUp invariant = "tikv-restart-others-up"
	// invPVCKept: no PVC of a wanted member (ordinal below the StatefulSet's replicas) is deleted,
	// except the PVCs a PD failover recorded for rebuilding that member.
	invPVCKept invariant = "pvc-of-wanted-member-kept"
	// invNoRestartOnTerminatingPVC: a member whose data PVC is Terminating is not restarted.
	invNoRestartOnTerminatingPVC invariant = "no-restart-on-terminating-pvc"
	// invNoEvictLeader: no evict-leader scheduler exists while the cluster reports a finished rollout
	// (Ready at its generation, TiKV phase Normal).
	invNoEvictLeader invariant = "no-evict-leader-after-rollout"
	// invReadyRolledOut: a TidbCluster that reports Ready=True at its generation with a component
	// Normal has that component's StatefulSet rolled out (asserted by regress/ready-before-rollout).
	invReadyRolledOut invariant = "ready-means-rolled-out"
	// invConverged: Ready=True at the current generation, StatefulSets at the spec (checked at the end).
	invConverged invariant = "converged"
)

var allInvariants = []invariant{invPDQuorum, invTiKVTombstone, invTiKVOthersUp, invPVCKept,
	invNoRestartOnTerminatingPVC, invNoEvictLeader, invReadyRolledOut, invTiFlashTombstone, invTiCDCDrained,
	invPumpOffline, invTiProxyOneDown, invBackupJobOnce, invTakeoverNoRestart, invDMQuorum, invDMDeleteScaledIn, invDMLeaderEvicted,
	invConverged}

// checker watches one scenario's namespace (pods, StatefulSets, PVCs through informers), polls the
// simulator and the TidbCluster, and judges every PD write of the operator; it counts each check.
type checker struct {
	env     *framework.Env
	pc      versioned.Interface
	sim     *simclient.Client
	tc      string
	excused map[invariant]bool

	mu     sync.Mutex
	checks map[invariant]int
	// violations are distinct: the same finding seen again (a poll every 250 ms sees a leftover
	// scheduler until it goes) is one violation, counted in seen.
	violations []*violation
	byKey      map[string]*violation
	deleting   map[types.UID]bool
	comp       *compState
	ledger     jobLedger
	takeover   bool // a takeover runs (takeover_test.go)

	sts  cache.Indexer
	pvcs cache.Indexer
	stop context.CancelFunc
	done chan struct{}
}

func newChecker(env *framework.Env, pc versioned.Interface, sim *simclient.Client, excused []invariant) *checker {
	c := &checker{env: env, pc: pc, sim: sim, tc: "basic", excused: map[invariant]bool{},
		checks: map[invariant]int{}, byKey: map[string]*violation{}, deleting: map[types.UID]bool{}, comp: newCompState(), done: make(chan struct{})}
	for _, inv := range excused {
		c.excused[inv] = true
	}
	return c
}

// start begins watching; the informers' caches are synced when it returns.
func (c *checker) start(ctx context.Context) error {
	ctx, c.stop = context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(c.env.Kube, 0, informers.WithNamespace(c.env.Namespace))
	pods := f.Core().V1().Pods().Informer()
	sts := f.Apps().V1().StatefulSets().Informer()
	pvcs := f.Core().V1().PersistentVolumeClaims().Informer()
	c.sts, c.pvcs = sts.GetIndexer(), pvcs.GetIndexer()
	_, err1 := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.onPod(ctx, obj, false) },
		DeleteFunc: func(obj any) { c.onPod(ctx, obj, true) },
	})
	_, err2 := sts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) { c.onStatefulSet(ctx, old.(*appsv1.StatefulSet), obj.(*appsv1.StatefulSet)) },
	})
	_, err3 := pvcs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.onPVC(obj, false) },
		DeleteFunc: func(obj any) { c.onPVC(obj, true) },
	})
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("add handlers: %w", errors.Join(err1, err2, err3))
	}
	if err := c.addComponentHandlers(ctx, f); err != nil {
		return err
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cache of %v did not sync", typ)
		}
	}
	go func() { defer close(c.done); c.pollLoop(ctx) }()
	return nil
}

// finish stops the checker and returns its counts and violations.
func (c *checker) finish() (map[invariant]int, []string) {
	c.stop()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[invariant]int{}
	for k, v := range c.checks {
		out[k] = v
	}
	var vs []string
	for _, v := range c.violations {
		vs = append(vs, v.String())
	}
	return out, vs
}

// violation is one distinct finding: an invariant and what was seen.
type violation struct {
	inv         invariant
	what        string
	first, last time.Time
	seen        int
}

func (v *violation) String() string {
	s := fmt.Sprintf("%s %s: %s", v.first.Format("15:04:05.000"), v.inv, v.what)
	if v.seen > 1 {
		s += fmt.Sprintf(" (seen %d times, until %s)", v.seen, v.last.Format("15:04:05.000"))
	}
	return s
}

// check counts one evaluation of inv and records a violation when ok is false (unless excused). A
// finding already recorded (same invariant, same text) is counted on it, not recorded again.
func (c *checker) check(inv invariant, ok bool, format string, args ...any) {
	c.checkKeyed(inv, ok, "", format, args...)
}

// checkKeyed is check where key, when not empty, says which findings are the same one (the text
// may then vary between them, e.g. a resourceVersion).
func (c *checker) checkKeyed(inv invariant, ok bool, key string, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks[inv]++
	if ok || c.excused[inv] {
		return
	}
	now, what := time.Now(), fmt.Sprintf(format, args...)
	if key == "" {
		key = what
	}
	key = string(inv) + "\x00" + key
	v := c.byKey[key]
	if v == nil {
		v = &violation{inv: inv, what: what, first: now}
		c.byKey[key] = v
		c.violations = append(c.violations, v)
	}
	v.seen++
	v.last = now
}

// excuseWhile excuses invs (still evaluated and counted, not judged) until the returned func is
// called: a chaos step that breaks them on purpose, as the user deleting the TidbCluster does.
func (c *checker) excuseWhile(invs ...invariant) (restore func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before := map[invariant]bool{}
	for _, inv := range invs {
		before[inv] = c.excused[inv]
		c.excused[inv] = true
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for inv, was := range before {
			c.excused[inv] = was
		}
	}
}

func (c *checker) state(ctx context.Context) (*api.ClusterState, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.sim.Cluster(ctx, c.env.Namespace, c.tc)
}

// replicas is the StatefulSet's spec.replicas in the informer cache, -1 if unknown.
func (c *checker) replicas(component string) int32 {
	obj, ok, _ := c.sts.GetByKey(c.env.Namespace + "/" + c.tc + "-" + component)
	if !ok || obj.(*appsv1.StatefulSet).Spec.Replicas == nil {
		return -1
	}
	return *obj.(*appsv1.StatefulSet).Spec.Replicas
}

// onPod judges a pod the first time it is seen deleting (or deleted).
func (c *checker) onPod(ctx context.Context, obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || ctx.Err() != nil || (!deleted && pod.DeletionTimestamp == nil) {
		return
	}
	c.mu.Lock()
	seen := c.deleting[pod.UID]
	c.deleting[pod.UID] = true
	c.mu.Unlock()
	if !seen {
		c.onTakeoverPod(pod)
	}
	component := pod.Labels["app.kubernetes.io/component"]
	ord, err := names.Ordinal(pod.Name)
	if !seen && err == nil && (component == "tiflash" || component == "ticdc" || component == "pump") {
		c.onComponentPod(ctx, pod, component, ord)
	}
	if seen || err != nil || (component != "pd" && component != "tikv") {
		return
	}
	st, err := c.state(ctx)
	if err != nil {
		return
	}
	replicas := c.replicas(component)
	if ord < replicas {
		c.checkPVCNotTerminating(ctx, pod, component)
	}
	switch component {
	case "pd":
		healthy := 0
		for _, m := range st.Members {
			if m.Healthy && m.Name != pod.Name {
				healthy++
			}
		}
		c.check(invPDQuorum, healthy >= len(st.Members)/2+1, "PD pod %s deleted while %d of %d members are healthy without it",
			pod.Name, healthy, len(st.Members))
	case "tikv":
		store := liveStore(st, pod.Name)
		if ord >= replicas {
			c.check(invTiKVTombstone, store == nil, "TiKV pod %s (ordinal %d, replicas %d) deleted while its store is %s",
				pod.Name, ord, replicas, stateOf(store))
			return
		}
		var notUp []string
		for _, s := range st.Stores {
			o, err := names.Ordinal(s.PodName)
			if err == nil && s.PodName != pod.Name && o < replicas && s.StateName != "Up" && s.StateName != "Tombstone" && s.StateName != "Offline" {
				notUp = append(notUp, fmt.Sprintf("%s=%s", s.PodName, s.StateName))
			}
		}
		c.check(invTiKVOthersUp, len(notUp) == 0, "TiKV pod %s restarted while other stores are not Up: %v", pod.Name, notUp)
	}
}

// checkPVCNotTerminating: a wanted member restarted while its data PVC is Terminating.
func (c *checker) checkPVCNotTerminating(ctx context.Context, pod *corev1.Pod, component string) {
	obj, ok, _ := c.pvcs.GetByKey(c.env.Namespace + "/" + component + "-" + pod.Name)
	terminating := ok && obj.(*corev1.PersistentVolumeClaim).DeletionTimestamp != nil
	c.check(invNoRestartOnTerminatingPVC, !terminating || c.pdFailoverRebuild(ctx, component, pod.Name),
		"pod %s deleted while its PVC %s-%s is Terminating", pod.Name, component, pod.Name)
}

// onStatefulSet judges a TiKV scale-down: every removed ordinal's store must be Tombstone (or never registered).
func (c *checker) onStatefulSet(ctx context.Context, old, sts *appsv1.StatefulSet) {
	c.onComponentSTS(ctx, old, sts)
	if sts.Name != c.tc+"-tikv" || old.Spec.Replicas == nil || sts.Spec.Replicas == nil || *sts.Spec.Replicas >= *old.Spec.Replicas {
		return
	}
	st, err := c.state(ctx)
	if err != nil {
		return
	}
	for ord := *sts.Spec.Replicas; ord < *old.Spec.Replicas; ord++ {
		pod := fmt.Sprintf("%s-%d", sts.Name, ord)
		store := liveStore(st, pod)
		c.check(invTiKVTombstone, store == nil, "StatefulSet %s scaled %d→%d while the store of %s is %s",
			sts.Name, *old.Spec.Replicas, *sts.Spec.Replicas, pod, stateOf(store))
	}
}

// beforePDWrite judges a PD write of the operator before it reaches PD.
func (c *checker) beforePDWrite(r *http.Request) {
	const prefix = "/pd/api/v1/members/"
	if r.Method != http.MethodDelete || !strings.HasPrefix(r.URL.Path, prefix) {
		return
	}
	kind, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, prefix), "/")
	st, err := c.state(r.Context())
	if err != nil {
		return
	}
	after, healthy := 0, 0
	for _, m := range st.Members {
		if (kind == "name" && m.Name == key) || (kind == "id" && fmt.Sprint(m.MemberID) == key) {
			continue
		}
		after++
		if m.Healthy {
			healthy++
		}
	}
	c.check(invPDQuorum, healthy >= after/2+1, "operator deletes PD member %s/%s leaving %d healthy of %d", kind, key, healthy, after)
}

// pollLoop re-checks the properties that no single event reveals, every 250ms.
func (c *checker) pollLoop(ctx context.Context) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.pollEvictLeader(ctx)
		c.pollRemovedPods(ctx)
		c.pollComponents(ctx)
	}
}

// pollEvictLeader: a cluster that reports a finished rollout has no evict-leader scheduler. The
// TidbCluster is read before and after the simulator, and only an unchanged one is judged.
//
// It is judged only while the TiKV StatefulSet (informer cache) is rolled out as well. The sync that
// applies a new TiKV template writes Ready=True at the new generation with TiKV Normal — its phase is
// computed from the StatefulSet as it was before the apply — and the next sync adds the first store's
// scheduler before its status write replaces that one (kill/tikv-config-rollout, pd-slow/tikv-upgrade).
// That scheduler is the rollout starting, not one left behind; the premature Ready is a status bug
// of its own, asserted by regress/ready-before-rollout (invReadyRolledOut), not by this invariant. A
// scheduler left once every pod runs the update revision is still a violation.
func (c *checker) pollEvictLeader(ctx context.Context) {
	get := func() *v1alpha1.TidbCluster {
		tc, err := c.pc.PingcapV1alpha1().TidbClusters(c.env.Namespace).Get(ctx, c.tc, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return tc
	}
	before := get()
	if before == nil || !rolloutFinished(before) || !c.rolledOut("tikv") {
		return
	}
	st, err := c.state(ctx)
	after := get()
	if err != nil || after == nil || after.ResourceVersion != before.ResourceVersion {
		return
	}
	// The finding names the TiKV StatefulSet as the checker sees it and as the status recorded it, so
	// a status written before the rollout even started (revisions differing, pods not yet updated) is
	// told apart from one written after the last restart.
	c.checkKeyed(invNoEvictLeader, len(evictSchedulers(st)) == 0, fmt.Sprint(evictSchedulers(st)),
		"TidbCluster (generation %d, resourceVersion %s) reports a finished rollout while PD has %v; TiKV StatefulSet %s; in status: %s",
		after.Generation, after.ResourceVersion, evictSchedulers(st), c.stsRollout("tikv"), rolloutOf(after.Status.TiKV.StatefulSet))
}

// rolledOut: the component's StatefulSet in the informer cache runs every replica on its update
// revision and its controller has seen its latest spec.
func (c *checker) rolledOut(component string) bool {
	obj, ok, _ := c.sts.GetByKey(c.env.Namespace + "/" + c.tc + "-" + component)
	if !ok {
		return false
	}
	return stsRolledOut(obj.(*appsv1.StatefulSet))
}

func stsRolledOut(sts *appsv1.StatefulSet) bool {
	st := sts.Status
	return st.ObservedGeneration == sts.Generation && st.CurrentRevision == st.UpdateRevision &&
		sts.Spec.Replicas != nil && st.UpdatedReplicas == *sts.Spec.Replicas
}

// stsRollout describes the rollout state of the component's StatefulSet in the informer cache.
func (c *checker) stsRollout(component string) string {
	obj, ok, _ := c.sts.GetByKey(c.env.Namespace + "/" + c.tc + "-" + component)
	if !ok {
		return "absent"
	}
	sts := obj.(*appsv1.StatefulSet)
	partition := "none"
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = fmt.Sprint(*ru.Partition)
	}
	return fmt.Sprintf("generation %d partition %s, %s", sts.Generation, partition, rolloutOf(&sts.Status))
}

func rolloutOf(st *appsv1.StatefulSetStatus) string {
	if st == nil {
		return "none"
	}
	return fmt.Sprintf("observedGeneration %d revisions %s→%s updated %d/%d", st.ObservedGeneration, st.CurrentRevision,
		st.UpdateRevision, st.UpdatedReplicas, st.Replicas)
}

// pollRemovedPods: a store beyond the TiKV StatefulSet's replicas whose pod is gone must be Tombstone.
func (c *checker) pollRemovedPods(ctx context.Context) {
	replicas := c.replicas("tikv")
	st, err := c.state(ctx)
	if err != nil || replicas < 0 {
		return
	}
	for _, s := range st.Stores {
		ord, err := names.Ordinal(s.PodName)
		if err != nil || ord < replicas || s.StateName == "Tombstone" || s.Engine == "tiflash" {
			continue
		}
		_, err = c.env.Kube.CoreV1().Pods(c.env.Namespace).Get(ctx, s.PodName, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || ctx.Err() != nil {
			continue
		}
		// The store may have become Tombstone, and its pod removed, since the first read.
		if now, err := c.state(ctx); err == nil {
			store := liveStore(now, s.PodName)
			c.check(invTiKVTombstone, store == nil || store.ID != s.ID, "pod %s is gone while its store %d is %s", s.PodName, s.ID, stateOf(store))
		}
	}
}

func rolloutFinished(tc *v1alpha1.TidbCluster) bool {
	ready := meta.FindStatusCondition(tc.Status.Conditions, v1alpha1.TidbClusterReady)
	return ready != nil && ready.Status == metav1.ConditionTrue && tc.Status.ObservedGeneration == tc.Generation &&
		tc.Status.TiKV.Phase == v1alpha1.NormalPhase
}

// liveStore is the store of pod that is not Tombstone, nil if none.
func liveStore(st *api.ClusterState, pod string) *api.Store {
	for i := range st.Stores {
		if st.Stores[i].PodName == pod && st.Stores[i].StateName != "Tombstone" {
			return &st.Stores[i]
		}
	}
	return nil
}

func stateOf(s *api.Store) string {
	if s == nil {
		return "Tombstone or absent"
	}
	return fmt.Sprintf("%s (store %d)", s.StateName, s.ID)
}

func evictSchedulers(st *api.ClusterState) []string {
	var out []string
	for _, s := range st.Schedulers {
		if strings.HasPrefix(s, "evict-leader-scheduler") {
			out = append(out, s)
		}
	}
	return out
}
