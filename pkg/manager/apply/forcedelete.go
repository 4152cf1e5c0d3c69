package apply

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ForceDeletePod deletes the pod name at once (grace period 0), only while
// its UID is uid, for the reason given. It is for a pod whose node is down:
// no kubelet will ever confirm a graceful deletion, so without it the pod
// stays Terminating and its StatefulSet cannot recreate it elsewhere. A pod
// already gone counts as deleted; a changed UID is the API's Conflict,
// wrapped.
func (a *Applier) ForceDeletePod(ctx context.Context, owner Owner, name string, uid types.UID, reason string) error {
	zero := int64(0)
	err := a.kube.CoreV1().Pods(owner.GetNamespace()).Delete(ctx, name,
		metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: UIDIs(uid)})
	return a.recordDelete(ctx, owner, "Pod", name, reason, err)
}
