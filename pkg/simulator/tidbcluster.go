package simulator

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// TidbClusterGVR is the TidbCluster resource the simulator optionally watches.
var TidbClusterGVR = schema.GroupVersionResource{Group: "pingcap.com", Version: "v1alpha1", Resource: "tidbclusters"}

// tidbClusterWatch watches TidbClusters through the dynamic client once the CRD is served. TidbClusters only
// add facts (existence, spec.clusterDomain): pods remain the source of truth.
type tidbClusterWatch struct {
	dyn       dynamic.Interface
	disc      discovery.DiscoveryInterface
	namespace string
	log       klog.Logger
	poll      time.Duration
	onChange  func(ClusterKey)

	mu     sync.RWMutex
	lister cache.GenericLister
}

func newTidbClusterWatch(dyn dynamic.Interface, disc discovery.DiscoveryInterface, namespace string, log klog.Logger) *tidbClusterWatch {
	return &tidbClusterWatch{dyn: dyn, disc: disc, namespace: namespace, log: log, poll: 30 * time.Second}
}

// run waits until the CRD is served, then runs the informer until ctx ends.
func (t *tidbClusterWatch) run(ctx context.Context) {
	if !t.crdServed() {
		t.log.Info("TidbCluster CRD not served: clusters are known from their pods only; checking again periodically",
			"resource", TidbClusterGVR.String(), "every", t.poll)
	}
	if err := wait.PollUntilContextCancel(ctx, t.poll, true, func(context.Context) (bool, error) {
		return t.crdServed(), nil
	}); err != nil {
		return
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(t.dyn, 0, t.namespace, nil)
	inf := factory.ForResource(TidbClusterGVR)
	notify := func(obj any) {
		if key, ok := tidbClusterKey(obj); ok && t.onChange != nil {
			t.onChange(key)
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) }, DeleteFunc: notify,
	})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	t.mu.Lock()
	t.lister = inf.Lister()
	t.mu.Unlock()
	// The initial list notified before the lister was visible; tell again now that lookups see it.
	objs, _ := inf.Lister().List(labels.Everything())
	for _, obj := range objs {
		notify(obj)
	}
	t.log.Info("watching TidbClusters", "namespace", t.namespace)
}

func (t *tidbClusterWatch) crdServed() bool {
	res, err := t.disc.ServerResourcesForGroupVersion(TidbClusterGVR.GroupVersion().String())
	if err != nil {
		return false
	}
	for _, r := range res.APIResources {
		if r.Name == TidbClusterGVR.Resource {
			return true
		}
	}
	return false
}

// tidbClusterKey is the cluster a TidbCluster defines: its namespace and its own instance label, else its
// name (as the operator labels the cluster's objects).
func tidbClusterKey(obj any) (ClusterKey, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ClusterKey{}, false
	}
	name := u.GetLabels()[LabelInstance]
	if name == "" {
		name = u.GetName()
	}
	return ClusterKey{Namespace: u.GetNamespace(), Name: name}, true
}

// lookup returns the facts of the TidbCluster that defines key, or nil when there is none (or the CRD is
// not watched yet).
func (t *tidbClusterWatch) lookup(key ClusterKey) *TidbClusterInfo {
	t.mu.RLock()
	lister := t.lister
	t.mu.RUnlock()
	if lister == nil {
		return nil
	}
	objs, _ := lister.ByNamespace(key.Namespace).List(labels.Everything())
	for _, obj := range objs {
		if k, ok := tidbClusterKey(obj); ok && k == key {
			u := obj.(*unstructured.Unstructured)
			domain, _, _ := unstructured.NestedString(u.Object, "spec", "clusterDomain")
			tls, _, _ := unstructured.NestedBool(u.Object, "spec", "tlsCluster", "enabled")
			return &TidbClusterInfo{
				ClusterDomain: domain, TLSCluster: tls, PDLocationLabels: pdLocationLabels(u),
				PDMaxReplicas: pdMaxReplicas(u), PDPlacementRules: pdPlacementRules(u),
			}
		}
	}
	return nil
}
