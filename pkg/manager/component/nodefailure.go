package component

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// NodeFailureConfig is --detect-node-failure and what goes with it.
type NodeFailureConfig struct {
	// Detect is --detect-node-failure: failure records are marked host-down.
	Detect bool
	// HardRecoveryPeriod is --pod-hard-recovery-period: a failure lasting
	// longer is host-down (24h when zero).
	HardRecoveryPeriod time.Duration
	// RestartGap is how long a pod restarted by auto-failure-recovery must
	// have run before its member or store is deleted (10m when zero).
	RestartGap time.Duration
}

// Reasons a failure record is marked host-down; each is also the reason of
// the Warning event that tells it.
const (
	// ReasonStoreDownTimeExceeded: the failure lasted longer than --pod-hard-recovery-period.
	ReasonStoreDownTimeExceeded = "StoreDownTimeExceeded"
	// ReasonNodeFailure: the pod's phase is Unknown, or it is NotReady on a NotReady or Unknown node.
	ReasonNodeFailure = "NodeFailure"
	// ReasonRODiskFound: the pod's node reports the condition RODiskFound.
	ReasonRODiskFound = "RODiskFound"
	// ReasonFailedDetectNodeFailure: the pod's node cannot be read (no permission).
	ReasonFailedDetectNodeFailure = "FailedDetectNodeFailure"
	// NodeConditionRODiskFound is the node condition a read-only disk detector sets.
	NodeConditionRODiskFound corev1.NodeConditionType = "RODiskFound"
)

// NodeFailure decides whether a failed member's host is down (spec §8.4)
// and restarts the pod of a host-down member elsewhere. Nodes are read by
// single GETs, once per sync each (the operator has no node cache). The
// zero value and nil detect nothing.
type NodeFailure struct {
	cfg      NodeFailureConfig
	kube     kubernetes.Interface
	pods     corelisters.PodLister
	pvcs     corelisters.PersistentVolumeClaimLister
	writer   *apply.Applier
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// NewNodeFailure returns the node-failure handling over env.
func NewNodeFailure(env *Env) *NodeFailure {
	return &NodeFailure{cfg: env.NodeFailure, kube: env.Kube, pods: env.Pods, pvcs: env.PVCs,
		writer: env.Writer, recorder: env.Recorder, clock: env.Clock}
}

// Detecting reports whether --detect-node-failure is on.
func (n *NodeFailure) Detecting() bool { return n != nil && n.cfg.Detect }

// AutoRecovery reports whether tc asks for host-down members to be
// restarted and deleted (annotation app.kubernetes.io/auto-failure-recovery: "true").
func AutoRecovery(tc *v1alpha1.TidbCluster) bool {
	return tc.Annotations[label.AnnAutoFailureRecovery] == "true"
}

// PVCUIDs returns the UIDs of the PVCs pod mounts, as a failure record
// keeps them (nil when the pod or its PVCs are not in the caches).
func (n *NodeFailure) PVCUIDs(tc *v1alpha1.TidbCluster, pod string) map[types.UID]v1alpha1.EmptyStruct {
	if n == nil || n.pods == nil || n.pvcs == nil {
		return nil
	}
	p, err := n.pods.Pods(tc.Namespace).Get(pod)
	if err != nil {
		return nil
	}
	var out map[types.UID]v1alpha1.EmptyStruct
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := n.pvcs.PersistentVolumeClaims(tc.Namespace).Get(v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[types.UID]v1alpha1.EmptyStruct{}
		}
		out[pvc.UID] = v1alpha1.EmptyStruct{}
	}
	return out
}

// HostDown returns why the host of pod, failed since since, is down, or ""
// when nothing says so: the failure lasted longer than the hard recovery
// period; the pod's phase is Unknown or it is NotReady on a node whose
// Ready condition is not True; the node reports RODiskFound. A node the
// operator may not read is a Warning FailedDetectNodeFailure and counts as
// up; another failure to read it is an error; a missing node counts as up
// (its pods are being deleted).
func (n *NodeFailure) HostDown(ctx context.Context, tc *v1alpha1.TidbCluster, pod string, since time.Time) (string, error) {
	period := n.cfg.HardRecoveryPeriod
	if period <= 0 {
		period = 24 * time.Hour
	}
	if Expired(since, period, n.clock.Now()) {
		return ReasonStoreDownTimeExceeded, nil
	}
	if n.pods == nil {
		return "", nil
	}
	p, err := n.pods.Pods(tc.Namespace).Get(pod)
	if err != nil || p.Spec.NodeName == "" {
		return "", nil //nolint:nilerr // no pod, or not scheduled: no node to be down
	}
	if p.Status.Phase == corev1.PodUnknown {
		return ReasonNodeFailure, nil
	}
	node, err := n.node(ctx, p.Spec.NodeName)
	if apierrors.IsForbidden(err) {
		n.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonFailedDetectNodeFailure,
			"node %s of pod %s cannot be read (the operator needs get on nodes): %v", p.Spec.NodeName, pod, err)
		return "", nil
	}
	if err != nil || node == nil {
		return "", err
	}
	if conditionTrue(node, NodeConditionRODiskFound) {
		return ReasonRODiskFound, nil
	}
	if !PodReady(p) && !conditionTrue(node, corev1.NodeReady) {
		return ReasonNodeFailure, nil
	}
	return "", nil
}

// node reads node name once per sync; nil when it does not exist.
func (n *NodeFailure) node(ctx context.Context, name string) (*corev1.Node, error) {
	if n.kube == nil {
		return nil, nil
	}
	node, err := flow.Remember(ctx, "node/"+name, func() (*corev1.Node, error) {
		return n.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	return node, nil
}

func conditionTrue(node *corev1.Node, t corev1.NodeConditionType) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// MarkHostDown decides for a failure record of what ("TiKV store 5 (pod
// basic-tikv-1)") not yet host-down, failed since since, whose PVCs are
// known: it returns true and records a Warning event whose reason names
// why when the host is down. Without --detect-node-failure it never marks.
func (n *NodeFailure) MarkHostDown(ctx context.Context, tc *v1alpha1.TidbCluster, what, pod string, since time.Time) (bool, error) {
	if !n.Detecting() {
		return false, nil
	}
	reason, err := n.HostDown(ctx, tc, pod, since)
	if err != nil || reason == "" {
		return false, err
	}
	n.recorder.Eventf(tc, corev1.EventTypeWarning, reason, "%s is host-down (%s)", what, reason)
	return true, nil
}

// Restarted reports, for the pod of a host-down failure recorded at
// recordedAt, whether it was restarted and has run for the restart gap, so
// that its member or store may be deleted if it still fails. A pod created
// before the record is force-deleted so that its StatefulSet recreates it
// on a live node (a RequeueError); a missing pod, or one younger than the
// gap, asks for a revisit (flow.RevisitAfter, which holds no other
// component) and returns false.
func (n *NodeFailure) Restarted(ctx context.Context, tc *v1alpha1.TidbCluster, pod string, recordedAt time.Time) (bool, error) {
	if n == nil || n.pods == nil || n.writer == nil {
		return false, nil
	}
	p, err := n.pods.Pods(tc.Namespace).Get(pod)
	if apierrors.IsNotFound(err) {
		flow.RevisitAfter(ctx, 5*time.Second, "pod %s of a host-down member is being recreated", pod)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get pod %s: %w", pod, err)
	}
	if p.CreationTimestamp.Time.Before(recordedAt) {
		if err := n.writer.ForceDeletePod(ctx, tc, pod, p.UID, "its host is down; it restarts on another node"); err != nil {
			return false, err
		}
		return false, flow.Requeue("force-deleted pod %s of a host-down member; waiting for it to restart", pod)
	}
	gap := n.cfg.RestartGap
	if gap <= 0 {
		gap = 10 * time.Minute
	}
	if age := n.clock.Since(p.CreationTimestamp.Time); age < gap {
		flow.RevisitAfter(ctx, gap-age, "pod %s of a host-down member restarted %s ago; deletion waits %s", pod, age.Round(time.Second), gap)
		return false, nil
	}
	return true, nil
}

// DeletePodAndPVCs deletes the PVCs whose UIDs are in uids and then pod (at
// once: its node may be down), so that the StatefulSet recreates it with
// empty volumes. Callers must have made sure the data may go (PD reports
// the store Tombstone, or the member was removed from PD).
func (n *NodeFailure) DeletePodAndPVCs(ctx context.Context, tc *v1alpha1.TidbCluster, pod string,
	uids map[types.UID]v1alpha1.EmptyStruct, why string) error {
	if n == nil || n.writer == nil || n.pvcs == nil || n.pods == nil {
		return fmt.Errorf("deleting pod %s and its PVCs: no writer or caches", pod)
	}
	pvcs, err := n.pvcs.PersistentVolumeClaims(tc.Namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list PVCs: %w", err)
	}
	for _, pvc := range pvcs {
		if _, ok := uids[pvc.UID]; !ok || pvc.DeletionTimestamp != nil {
			continue
		}
		if err := n.writer.DeletePVC(ctx, tc, pvc.Name, apply.UIDIs(pvc.UID), why); err != nil {
			return err
		}
	}
	p, err := n.pods.Pods(tc.Namespace).Get(pod)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", pod, err)
	}
	return n.writer.ForceDeletePod(ctx, tc, pod, p.UID, why)
}
