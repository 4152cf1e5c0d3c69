package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RemovePodAnnotations removes the annotation keys from the pod name (a
// user's maintenance request that expired). A pod already gone, or without
// the keys, is not an error; any other failure records a Warning
// FailedPatch event on owner and is returned wrapped.
func (a *Applier) RemovePodAnnotations(ctx context.Context, owner Owner, name string, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	remove := make(map[string]any, len(keys))
	for _, k := range keys {
		remove[k] = nil // JSON null deletes the key in a merge patch
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": remove}})
	if err != nil {
		return fmt.Errorf("encode annotation removal: %w", err)
	}
	_, err = a.kube.CoreV1().Pods(owner.GetNamespace()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return a.recordPatch(ctx, owner, "Pod", name, err)
}
