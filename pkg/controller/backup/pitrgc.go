package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// The PiTR restore's TiKV GC overlay (spec §9). Before the Job of a PiTR
// restore starts, the controller names the Restore in the target
// TidbCluster's annotation label.AnnPiTRRestore; the TidbCluster's TiKV
// then renders gc.ratio-threshold = -1 over the user's config and marks its
// pod template (pkg/manager/tikv, overlay.go), which rolls TiKV. The
// restore waits, with a False Scheduled condition, until that rollout has
// finished, and only then gets its Job. Once the Restore is Complete or
// Failed (or deleted), the annotation goes, and TiKV rolls back to the
// user's value.
const (
	// ReasonGCOverlaySet is the Normal event of a PiTR Restore whose target
	// cluster was annotated.
	ReasonGCOverlaySet = "TiKVGCOverlaySet"
	// ReasonGCOverlayRemoved is the Normal event of a finished PiTR Restore
	// (or, when it was deleted, of its cluster) whose annotation was removed.
	ReasonGCOverlayRemoved = "TiKVGCOverlayRemoved"
	// ReasonWaitGCOverlay is the reason of the False Scheduled condition
	// of a PiTR Restore waiting for TiKV to run with the overlay, or for
	// another PiTR Restore of the same cluster to end.
	ReasonWaitGCOverlay = "WaitingForTiKVGCOverlay"
)

// overlayPoll is how soon a restore waiting for TiKV's rollout looks
// again; the TidbCluster's status updates during the rollout requeue it
// sooner (NewRestoreController).
const overlayPoll = 5 * time.Second

// restoreKey is r as label.AnnPiTRRestore names it: "<namespace>/<name>".
func restoreKey(r *v1alpha1.Restore) string { return r.Namespace + "/" + r.Name }

// holdGCOverlay makes TiKV of tc run with gc.ratio-threshold = -1 for the
// PiTR restore r. It returns nil once the TiKV StatefulSet's rollout
// carrying the overlay has finished (at once for a cluster without TiKV of
// its own), and a RequeueError while it waits: for another PiTR restore
// holding tc to end, or for TiKV's rollout. API errors are returned
// wrapped and retried.
func (c *restoreControl) holdGCOverlay(ctx context.Context, r *v1alpha1.Restore, tc *v1alpha1.TidbCluster) error {
	if tc.Spec.TiKV == nil {
		return nil
	}
	key := restoreKey(r)
	switch holder := tc.Annotations[label.AnnPiTRRestore]; holder {
	case key:
	case "":
		if err := c.setHolder(ctx, tc, key); err != nil {
			return err
		}
		c.recorder.Eventf(r, corev1.EventTypeNormal, ReasonGCOverlaySet,
			"TiKV of TidbCluster %s/%s gets gc.ratio-threshold = -1 until this restore ends; the restore Job starts once TiKV restarted with it",
			tc.Namespace, tc.Name)
	default:
		return c.waitGCOverlay(ctx, r, fmt.Sprintf("TidbCluster %s/%s is held by PiTR restore %s; waiting for it to end",
			tc.Namespace, tc.Name, holder), "another PiTR restore holds the cluster")
	}
	sts, err := c.sets.StatefulSets(tc.Namespace).Get(names.Member(tc.Name, names.TiKV))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get TiKV StatefulSet of %s/%s: %w", tc.Namespace, tc.Name, err)
	}
	if ok, why := tikvRunsOverlay(sts); !ok {
		return c.waitGCOverlay(ctx, r, fmt.Sprintf("waiting for TiKV of TidbCluster %s/%s to restart with gc.ratio-threshold = -1",
			tc.Namespace, tc.Name), why)
	}
	return nil
}

// tikvRunsOverlay reports whether every pod of TiKV's StatefulSet sts runs
// the template carrying the overlay and is ready, and otherwise why not.
// Pure.
func tikvRunsOverlay(sts *appsv1.StatefulSet) (bool, string) {
	switch {
	case sts == nil:
		return false, "TiKV's StatefulSet does not exist yet"
	case sts.Spec.Template.Annotations[label.AnnTiKVConfigOverlay] != label.TiKVGCOverlay:
		return false, "TiKV's pod template does not carry the overlay yet (is the cluster paused?)"
	case sts.Status.ObservedGeneration < sts.Generation:
		return false, "the StatefulSet controller has not seen TiKV's new template yet"
	}
	want, st := ptr.Deref(sts.Spec.Replicas, 1), sts.Status
	if st.CurrentRevision != st.UpdateRevision || st.UpdatedReplicas < want || st.ReadyReplicas < want {
		return false, fmt.Sprintf("%d of %d TiKV pods run with it, %d ready", st.UpdatedReplicas, want, st.ReadyReplicas)
	}
	return true, ""
}

// waitGCOverlay records why r waits (a False Scheduled condition with
// message, written only when it changes) and returns the RequeueError of
// the wait, whose reason adds detail.
func (c *restoreControl) waitGCOverlay(ctx context.Context, r *v1alpha1.Restore, message, detail string) error {
	cond := restoreCond(v1alpha1.RestoreScheduled, ReasonWaitGCOverlay, message)
	cond.Status = corev1.ConditionFalse
	if _, _, err := c.setRestoreConditions(ctx, r, cond); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("PiTR restore waits for TiKV's GC overlay", "restore", klog.KObj(r), "detail", detail)
	return flow.RequeueAfter(overlayPoll, "%s: %s", message, detail)
}

// releaseGCOverlay removes the annotation naming the finished restore r
// from its target cluster, if it is still there; nothing else is touched.
func (c *restoreControl) releaseGCOverlay(ctx context.Context, r *v1alpha1.Restore) error {
	if r.Spec.BR == nil {
		return nil
	}
	ns := r.Namespace
	if r.Spec.BR.ClusterNamespace != "" {
		ns = r.Spec.BR.ClusterNamespace
	}
	tc, err := c.cluster(ns, r.Spec.BR.Cluster)
	if tc == nil || err != nil || tc.Annotations[label.AnnPiTRRestore] != restoreKey(r) {
		return err
	}
	if err := c.setHolder(ctx, tc, ""); err != nil {
		return err
	}
	c.recorder.Eventf(r, corev1.EventTypeNormal, ReasonGCOverlayRemoved,
		"restore ended: TiKV of TidbCluster %s/%s gets its own gc.ratio-threshold back (TiKV restarts)", tc.Namespace, tc.Name)
	return nil
}

// releaseGone removes the annotation naming the deleted Restore ns/name
// from every cached TidbCluster that carries it (a Restore deleted while it
// ran), with a Normal event on the cluster.
func (c *restoreControl) releaseGone(ctx context.Context, ns, name string) error {
	all, err := c.clusters.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list TidbClusters: %w", err)
	}
	key := ns + "/" + name
	for _, tc := range all {
		if tc.Annotations[label.AnnPiTRRestore] != key {
			continue
		}
		if err := c.setHolder(ctx, tc, ""); err != nil {
			return err
		}
		c.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonGCOverlayRemoved,
			"PiTR restore %s was deleted: TiKV gets its own gc.ratio-threshold back (TiKV restarts)", key)
	}
	return nil
}

// setHolder sets label.AnnPiTRRestore on tc to key ("" removes it) with a
// merge patch carrying tc's resourceVersion, so that a concurrent change
// conflicts and the sync is retried from a fresh read.
func (c *restoreControl) setHolder(ctx context.Context, tc *v1alpha1.TidbCluster, key string) error {
	var value any
	if key != "" {
		value = key
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": tc.ResourceVersion, "annotations": map[string]any{label.AnnPiTRRestore: value}}})
	if err != nil {
		return fmt.Errorf("encode the PiTR annotation patch: %w", err)
	}
	if _, err := c.pc.PingcapV1alpha1().TidbClusters(tc.Namespace).Patch(ctx, tc.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotate TidbCluster %s/%s with %s=%q: %w", tc.Namespace, tc.Name, label.AnnPiTRRestore, key, err)
	}
	return nil
}
