package simulator

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Labels the operator puts on every object of a cluster (spec §3.3).
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	ManagedByValue = "tidb-operator"
)

// pendingRetry is how soon a cluster whose pod waits for an unseen PVC is looked at again.
const pendingRetry = 2 * time.Second

// Watcher feeds a Registry from the API server: shared informers on Pods and PVCs labelled
// managed-by=tidb-operator (and, when the CRD exists, TidbClusters) enqueue the cluster of every changed
// object; one worker rebuilds that cluster's observation from the caches and hands it to the Registry.
type Watcher struct {
	reg       *Registry
	kube      kubernetes.Interface
	namespace string
	log       klog.Logger
	queue     workqueue.TypedRateLimitingInterface[ClusterKey]
	// dmQueue queues the DMClusters, simulated apart (dm_watch.go).
	dmQueue workqueue.TypedRateLimitingInterface[ClusterKey]
	factory informers.SharedInformerFactory
	pods    corelisters.PodLister
	pvcs    corelisters.PersistentVolumeClaimLister
	tcs     *tidbClusterWatch
	resizer *resizer
	// joined is the cluster each heterogeneous cluster joined when last observed (heterogeneous.go).
	joinMu sync.Mutex
	joined map[ClusterKey]ClusterKey
}

// NewWatcher builds the informers; namespace "" watches all namespaces. tcs may be nil (no TidbCluster
// watch). Nothing runs until Start.
func NewWatcher(reg *Registry, kube kubernetes.Interface, namespace string, tcs *tidbClusterWatch, log klog.Logger) *Watcher {
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue}).String()
	factory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	w := &Watcher{
		reg: reg, kube: kube, namespace: namespace, log: log, factory: factory, tcs: tcs, joined: map[ClusterKey]ClusterKey{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[ClusterKey](),
			workqueue.TypedRateLimitingQueueConfig[ClusterKey]{Name: "tidb-simulator"}),
		dmQueue: newDMQueue(),
		pods:    factory.Core().V1().Pods().Lister(),
		pvcs:    factory.Core().V1().PersistentVolumeClaims().Lister(),
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    w.enqueueObject,
		UpdateFunc: func(_, obj any) { w.enqueueObject(obj) },
		DeleteFunc: w.enqueueObject,
	}
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(handler)
	_, _ = factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(handler)
	w.resizer = newResizer(kube, factory.Core().V1().PersistentVolumeClaims().Informer(), log)
	if tcs != nil {
		tcs.onChange = func(key ClusterKey) { w.queue.Add(key) }
	}
	return w
}

// Start runs the informers and the worker until ctx ends. It returns once the Pod and PVC caches are
// synced, or an error when ctx ends first.
func (w *Watcher) Start(ctx context.Context) error {
	w.factory.Start(ctx.Done())
	for typ, ok := range w.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("wait for the %v informer cache to sync: %w", typ, context.Cause(ctx))
		}
	}
	if w.tcs != nil {
		go w.tcs.run(ctx)
	}
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
		w.dmQueue.ShutDown()
	}()
	go w.runDM(ctx)
	go func() {
		for w.processNext(ctx) {
		}
	}()
	go w.resizer.run(ctx)
	w.log.Info("watching pods and PVCs", "namespace", w.namespace, "selector", LabelManagedBy+"="+ManagedByValue)
	return nil
}

// enqueueObject queues the cluster an object belongs to (its namespace and instance label).
func (w *Watcher) enqueueObject(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	meta, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if isDMObject(meta) {
		w.enqueueDM(meta)
		return
	}
	if name := meta.GetLabels()[LabelInstance]; name != "" {
		w.queue.Add(ClusterKey{Namespace: meta.GetNamespace(), Name: name})
	}
}

func (w *Watcher) processNext(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	obs, pending := w.observe(ctx, key)
	w.reg.Observe(key, obs)
	w.requeueJoined(key, obs)
	w.queue.Forget(key)
	if pending {
		w.queue.AddAfter(key, pendingRetry)
	}
	return true
}

// observe rebuilds the observation of key from the caches; pending reports a pod waiting for a PVC. The
// pods of a heterogeneous cluster are observed with the cluster whose PD it joins (heterogeneous.go).
func (w *Watcher) observe(ctx context.Context, key ClusterKey) (ClusterObservation, bool) {
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue, LabelInstance: key.Name})
	var obs ClusterObservation
	if w.tcs != nil {
		obs.TidbCluster = w.tcs.lookup(key)
	}
	pending := false
	if obs.TidbCluster == nil || obs.TidbCluster.Joins == nil {
		for _, p := range w.ownPods(ctx, key) {
			pending = pending || p.PVCPending
			obs.Pods = append(obs.Pods, p)
		}
		pending = w.addJoinedPods(ctx, key, &obs) || pending
	}
	pvcs, _ := w.pvcs.PersistentVolumeClaims(key.Namespace).List(selector)
	obs.HasPVCs = len(notDM(pvcs)) > 0
	return obs, pending
}

// podObservation extracts what the simulator needs from pod.
func (w *Watcher) podObservation(ctx context.Context, pod *corev1.Pod, comp Component) PodObservation {
	p := PodObservation{
		Name:      pod.Name,
		Component: comp,
		Running:   pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil,
		UID:       string(pod.UID),
		IP:        pod.Status.PodIP,
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == string(comp) {
			p.Restarts = cs.RestartCount
		}
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			p.Ready = p.Running
		}
	}
	for i, c := range pod.Spec.Containers {
		if c.Name == string(comp) || (i == 0 && p.Version == "") {
			p.Version = imageVersion(c.Image)
		}
	}
	if !hasDataIdentity(comp) {
		return p
	}
	if claim := dataClaimName(pod, comp); claim != "" {
		p.PVCUID, p.PVCPending = w.pvcUID(ctx, pod.Namespace, claim)
	}
	return p
}

// hasDataIdentity reports whether the component's identity is its data PVC. A TiCDC capture is one run of
// the process (its capture ID is new on every start), TiProxy and PD's micro-services keep no state the
// simulator follows and a
// Pump node ID is the pod's hostname and port whatever its data, so their pods never wait for a PVC.
func hasDataIdentity(comp Component) bool {
	return comp != ComponentTiCDC && comp != ComponentTiProxy && comp != ComponentPump &&
		comp != ComponentTSO && comp != ComponentScheduling
}

// dataClaimName is the PVC holding the component's data: <comp>-<pod> as the operator's volumeClaimTemplate
// names it (data0-<pod> for TiFlash, whose first storage claim is data0), else the first PVC the pod
// mounts; empty when it mounts none.
func dataClaimName(pod *corev1.Pod, comp Component) string {
	want := string(comp) + "-" + pod.Name
	if comp == ComponentTiFlash {
		want = "data0-" + pod.Name
	}
	first := ""
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if v.PersistentVolumeClaim.ClaimName == want {
			return v.PersistentVolumeClaim.ClaimName
		}
		if first == "" {
			first = v.PersistentVolumeClaim.ClaimName
		}
	}
	return first
}

// pvcUID returns the UID of PVC namespace/name from the cache, else from the API server (a PVC without the
// managed-by label is not cached); pending when it does not exist (yet) or cannot be read.
func (w *Watcher) pvcUID(ctx context.Context, namespace, name string) (uid string, pending bool) {
	if pvc, err := w.pvcs.PersistentVolumeClaims(namespace).Get(name); err == nil {
		return string(pvc.UID), false
	}
	getCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pvc, err := w.kube.CoreV1().PersistentVolumeClaims(namespace).Get(getCtx, name, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			w.log.Error(err, "read PVC", "pvc", klog.KRef(namespace, name))
		}
		return "", true
	}
	return string(pvc.UID), false
}
