package tidbcluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
)

// podMaintenanceHandler enqueues a pod's cluster when a maintenance
// annotation (component.MaintenanceAnnotations) of one of its pods is set,
// changed or removed, so a user's request is acted on at once rather than
// at the next resync. Other pod changes are left to the skeleton's own
// reads.
func (c *Controller) podMaintenanceHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, ok := maintenanceChanged(nil, obj); ok {
				c.worker.EnqueueKey(key)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if key, ok := maintenanceChanged(oldObj, newObj); ok {
				c.worker.EnqueueKey(key)
			}
		},
	}
}

// maintenanceChanged returns the key of the cluster of newObj when it is a
// pod of the operator whose maintenance annotations differ from oldObj's
// (oldObj nil: a new pod carrying one).
func maintenanceChanged(oldObj, newObj any) (string, bool) {
	pod, ok := newObj.(*corev1.Pod)
	if !ok || pod.Labels[label.ManagedByLabelKey] != label.TiDBOperator || pod.Labels[label.InstanceLabelKey] == "" {
		return "", false
	}
	var before map[string]string
	if old, ok := oldObj.(*corev1.Pod); ok {
		before = old.Annotations
	}
	for _, k := range component.MaintenanceAnnotations {
		v1, ok1 := before[k]
		v2, ok2 := pod.Annotations[k]
		if ok1 != ok2 || v1 != v2 {
			return pod.Namespace + "/" + pod.Labels[label.InstanceLabelKey], true
		}
	}
	return "", false
}
