package simulator

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
)

// newDMQueue is the queue of DMClusters whose pods or PVCs changed.
func newDMQueue() workqueue.TypedRateLimitingInterface[ClusterKey] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[ClusterKey](),
		workqueue.TypedRateLimitingQueueConfig[ClusterKey]{Name: "tidb-simulator-dm"})
}

// isDMObject reports whether an object belongs to a DMCluster (`app.kubernetes.io/name=dm-cluster`).
func isDMObject(meta metav1.Object) bool { return meta.GetLabels()[LabelName] == dmLabelName }

// enqueueDM queues the DMCluster of a DM object.
func (w *Watcher) enqueueDM(meta metav1.Object) {
	if name := meta.GetLabels()[LabelInstance]; name != "" {
		w.dmQueue.Add(ClusterKey{Namespace: meta.GetNamespace(), Name: name})
	}
}

// runDM works the DMCluster queue until it shuts down.
func (w *Watcher) runDM(ctx context.Context) {
	for {
		key, quit := w.dmQueue.Get()
		if quit {
			return
		}
		w.reg.ObserveDM(key, w.observeDM(ctx, key))
		w.dmQueue.Forget(key)
		w.dmQueue.Done(key)
	}
}

// observeDM rebuilds the observation of DMCluster key from the caches.
func (w *Watcher) observeDM(ctx context.Context, key ClusterKey) DMObservation {
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue, LabelInstance: key.Name, LabelName: dmLabelName})
	var obs DMObservation
	pods, _ := w.pods.Pods(key.Namespace).List(selector)
	for _, pod := range pods {
		comp := Component(pod.Labels[LabelComponent])
		if comp == ComponentDMMaster || comp == ComponentDMWorker {
			obs.Pods = append(obs.Pods, w.podObservation(ctx, pod, comp))
		}
	}
	pvcs, _ := w.pvcs.PersistentVolumeClaims(key.Namespace).List(selector)
	obs.HasPVCs = len(pvcs) > 0
	return obs
}

// notDM keeps the objects that are not a DMCluster's.
func notDM[T metav1.Object](objs []T) []T {
	out := objs[:0]
	for _, o := range objs {
		if !isDMObject(o) {
			out = append(out, o)
		}
	}
	return out
}
