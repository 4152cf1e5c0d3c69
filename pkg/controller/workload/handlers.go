package workload

import (
	"fmt"

	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/controller"
)

// Dependents returns the keys ("namespace/name") of the workloads serving
// the TidbCluster tcNamespace/tcName.
type Dependents func(tcNamespace, tcName string) []string

// RegisterChildHandlers enqueues the owner (of kind ownerKind, looked up by
// getOwner) of every StatefulSet, Service and ConfigMap event, and the
// dependents of every TidbCluster added, changed or deleted: a workload
// waiting for its cluster converges when the cluster appears, and its
// arguments follow the cluster's TLS and version. It fails when a handler
// cannot be registered.
func RegisterChildHandlers(deps *controller.Dependencies, w *controller.Worker, ownerKind string,
	getOwner controller.OwnerGetter, dependents Dependents) error {
	core := deps.KubeInformerFactory.Core().V1()
	children := map[string]cache.SharedIndexInformer{
		"StatefulSet": deps.KubeInformerFactory.Apps().V1().StatefulSets().Informer(),
		"Service":     core.Services().Informer(),
		"ConfigMap":   core.ConfigMaps().Informer(),
	}
	for kind, inf := range children {
		if _, err := inf.AddEventHandler(controller.EnqueueOwnerHandler(w, ownerKind, getOwner)); err != nil {
			return fmt.Errorf("%s controller: register %s handler: %w", w.Name(), kind, err)
		}
	}
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		tc, ok := obj.(*v1alpha1.TidbCluster)
		if !ok {
			return
		}
		for _, key := range dependents(tc.Namespace, tc.Name) {
			w.EnqueueAfter(key, controller.ChildUpdateDelay)
		}
	}
	_, err := deps.InformerFactory.Pingcap().V1alpha1().TidbClusters().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*v1alpha1.TidbCluster)
			n, ok2 := newObj.(*v1alpha1.TidbCluster)
			// Only a spec change (generation) can change what is built.
			if ok1 && ok2 && o.Generation == n.Generation {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	})
	if err != nil {
		return fmt.Errorf("%s controller: register TidbCluster handler: %w", w.Name(), err)
	}
	return nil
}
