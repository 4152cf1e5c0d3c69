package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
)

// WithClusters lets the Applier write TidbCluster metadata through pc
// (AnnotateTidbCluster) and returns it. Without it that write fails.
func (a *Applier) WithClusters(pc versioned.Interface) *Applier {
	a.clusters = pc
	return a
}

// errNoClusterClient is AnnotateTidbCluster's error when WithClusters was
// not called (a test or render built the Applier without one).
var errNoClusterClient = errors.New("the write layer has no TidbCluster client")

// AnnotateTidbCluster records progress that must survive an operator
// restart on the TidbCluster itself (house rule 14): it merges set into
// tc's annotations and removes the keys in remove, in one merge patch of
// the object's metadata that carries tc's UID (a TidbCluster deleted and
// created again under the same name is refused), and mirrors the change in
// tc so the rest of the sync sees it. Nothing is sent when tc already says
// so. A failure records a Warning FailedPatch event and is returned
// wrapped; the caller retries on its next sync.
func (a *Applier) AnnotateTidbCluster(ctx context.Context, tc *v1alpha1.TidbCluster, set map[string]string, remove ...string) error {
	changes := map[string]any{}
	for k, v := range set {
		if old, ok := tc.Annotations[k]; !ok || old != v {
			changes[k] = v
		}
	}
	for _, k := range remove {
		if _, ok := tc.Annotations[k]; ok {
			changes[k] = nil // JSON null deletes the key in a merge patch
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if a.clusters == nil {
		return a.recordPatch(ctx, tc, "TidbCluster", tc.Name, errNoClusterClient)
	}
	meta := map[string]any{"annotations": changes}
	if tc.UID != "" {
		meta["uid"] = tc.UID // the API server refuses the patch of another object of that name
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return fmt.Errorf("encode TidbCluster annotations: %w", err)
	}
	_, err = a.clusters.PingcapV1alpha1().TidbClusters(tc.Namespace).Patch(ctx, tc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err := a.recordPatch(ctx, tc, "TidbCluster", tc.Name, err); err != nil {
		return err
	}
	if tc.Annotations == nil {
		tc.Annotations = map[string]string{}
	}
	maps.Copy(tc.Annotations, set)
	for _, k := range remove {
		delete(tc.Annotations, k)
	}
	return nil
}
