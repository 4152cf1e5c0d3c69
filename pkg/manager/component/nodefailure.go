package component

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
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
	// ReasonHostDownPodKept (Normal): after a host-down member was deleted,
	// its pod was left alone since it already runs a new member (none of
	// its PVCs is a recorded one).
	ReasonHostDownPodKept = "HostDownPodKept"
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
	sets     appslisters.StatefulSetLister
	writer   *apply.Applier
	recorder record.EventRecorder
	clock    clock.PassiveClock

	mu        sync.Mutex
	forbidden map[string]bool // failure records already told FailedDetectNodeFailure
}

// maxForbiddenWarned bounds the records remembered for
// FailedDetectNodeFailure: past it the memory starts again (at worst one
// more Warning per record).
const maxForbiddenWarned = 1024

// firstForbidden reports whether the record of pod failed since since has
// not been told FailedDetectNodeFailure yet, and remembers it was.
func (n *NodeFailure) firstForbidden(tc *v1alpha1.TidbCluster, pod string, since time.Time) bool {
	key := tc.GetNamespace() + "/" + tc.GetName() + "/" + pod + "@" + since.UTC().Format(time.RFC3339Nano)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.forbidden[key] {
		return false
	}
	if n.forbidden == nil || len(n.forbidden) >= maxForbiddenWarned {
		n.forbidden = map[string]bool{}
	}
	n.forbidden[key] = true
	return true
}

// NewNodeFailure returns the node-failure handling over env.
func NewNodeFailure(env *Env) *NodeFailure {
	return &NodeFailure{cfg: env.NodeFailure, kube: env.NodeClient(), pods: env.Pods, pvcs: env.PVCs, sets: env.StatefulSets,
		writer: env.Writer, recorder: env.Recorder, clock: env.Clock}
}

// Detecting reports whether --detect-node-failure is on.
func (n *NodeFailure) Detecting() bool { return n != nil && n.cfg.Detect }

// AutoRecovery reports whether tc asks for host-down members to be
// restarted and deleted (annotation app.kubernetes.io/auto-failure-recovery: "true").
func AutoRecovery(tc *v1alpha1.TidbCluster) bool {
	return tc.Annotations[label.AnnAutoFailureRecovery] == "true"
}

// PVCUIDs returns the UIDs of pod's own PVCs (those of its StatefulSet's
// volume claim templates, never a PVC of additionalVolumes, which may be
// shared), as a failure record keeps them (nil when the pod, its
// StatefulSet or its PVCs are not in the caches).
func (n *NodeFailure) PVCUIDs(tc *v1alpha1.TidbCluster, pod string) map[types.UID]v1alpha1.EmptyStruct {
	if n == nil || n.pods == nil || n.pvcs == nil {
		return nil
	}
	if _, err := n.pods.Pods(tc.GetNamespace()).Get(pod); err != nil {
		return nil
	}
	var out map[types.UID]v1alpha1.EmptyStruct
	claims, _ := n.memberClaims(tc.GetNamespace(), pod)
	for _, name := range claims {
		pvc, err := n.pvcs.PersistentVolumeClaims(tc.GetNamespace()).Get(name)
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

// memberClaims returns the names of the PVCs the StatefulSet of pod
// ("<sts>-<ordinal>") creates for it from its volume claim templates (nil
// and an error when the StatefulSet is not in the cache).
func (n *NodeFailure) memberClaims(ns, pod string) ([]string, error) {
	i := strings.LastIndexByte(pod, '-')
	if n.sets == nil || i < 0 {
		return nil, fmt.Errorf("no StatefulSet cache for the PVCs of pod %s", pod)
	}
	set, err := n.sets.StatefulSets(ns).Get(pod[:i])
	if err != nil {
		return nil, fmt.Errorf("get StatefulSet %s of pod %s: %w", pod[:i], pod, err)
	}
	return podClaimNames(set.Spec.VolumeClaimTemplates, pod), nil
}

// HostDown returns why the host of pod, failed since since, is down, or ""
// when nothing says so: the failure lasted longer than the hard recovery
// period; the pod's phase is Unknown or it is NotReady on a node whose
// Ready condition is not True; the node reports RODiskFound. A node the
// operator may not read is a Warning FailedDetectNodeFailure (once per
// failure record, i.e. pod and since) and counts as up; another failure to read it is an error; a missing node counts as up
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
	p, err := n.pods.Pods(tc.GetNamespace()).Get(pod)
	if err != nil || p.Spec.NodeName == "" {
		return "", nil //nolint:nilerr // no pod, or not scheduled: no node to be down
	}
	if p.Status.Phase == corev1.PodUnknown {
		return ReasonNodeFailure, nil
	}
	node, err := n.node(ctx, p.Spec.NodeName)
	if apierrors.IsForbidden(err) {
		if n.firstForbidden(tc, pod, since) {
			n.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonFailedDetectNodeFailure,
				"node %s of pod %s cannot be read (the operator needs get on nodes): %v", p.Spec.NodeName, pod, err)
		}
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
	p, err := n.pods.Pods(tc.GetNamespace()).Get(pod)
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

// DeletePodAndPVCs deletes pod's own PVCs (those of its claim templates)
// whose UIDs are in uids, and then pod, so that the StatefulSet recreates
// it with empty volumes. The pod goes at once (grace period 0) only when
// no kubelet would finish a graceful deletion: its node is NotReady,
// Unknown or gone, or the pod is already Terminating; otherwise it is
// deleted gracefully under a UID precondition. A pod none of whose PVCs is
// in uids already runs a new member: it is left alone (a Normal event) and
// kept is true.
// Callers must have made sure the data may go (PD reports the store
// Tombstone, or the member was removed from PD). It errors, deleting
// nothing, when pod's StatefulSet is not in the cache; an error of a read
// or delete is returned, and a call again resumes.
func (n *NodeFailure) DeletePodAndPVCs(ctx context.Context, tc *v1alpha1.TidbCluster, pod string,
	uids map[types.UID]v1alpha1.EmptyStruct, why string) (kept bool, err error) {
	if n == nil || n.writer == nil || n.pvcs == nil || n.pods == nil {
		return false, fmt.Errorf("deleting pod %s and its PVCs: no writer or caches", pod)
	}
	recorded, found, err := n.deleteRecordedClaims(ctx, tc, pod, uids, why)
	if err != nil {
		return false, err
	}
	if found && !recorded {
		n.recorder.Eventf(tc, corev1.EventTypeNormal, ReasonHostDownPodKept,
			"pod %s already runs a new member (its PVCs are new): not deleted (%s)", pod, why)
		return true, nil
	}
	p, err := n.pods.Pods(tc.GetNamespace()).Get(pod)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get pod %s: %w", pod, err)
	}
	force, err := n.mustForce(ctx, p)
	if err != nil {
		return false, err
	}
	if force {
		return false, n.writer.ForceDeletePod(ctx, tc, pod, p.UID, why)
	}
	return false, n.writer.DeletePod(ctx, tc, pod, apply.UIDIs(p.UID), why)
}

// deleteRecordedClaims deletes pod's own PVCs whose UIDs are in uids. It
// reports whether one of them is recorded, and whether any is in the cache.
func (n *NodeFailure) deleteRecordedClaims(ctx context.Context, tc *v1alpha1.TidbCluster, pod string,
	uids map[types.UID]v1alpha1.EmptyStruct, why string) (recorded, found bool, err error) {
	claims, err := n.memberClaims(tc.GetNamespace(), pod)
	if err != nil {
		return false, false, err
	}
	for _, name := range claims {
		pvc, err := n.pvcs.PersistentVolumeClaims(tc.GetNamespace()).Get(name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, false, fmt.Errorf("get PVC %s: %w", name, err)
		}
		found = true
		if _, ok := uids[pvc.UID]; !ok {
			continue
		}
		recorded = true
		if pvc.DeletionTimestamp != nil {
			continue
		}
		if err := n.writer.DeletePVC(ctx, tc, name, apply.UIDIs(pvc.UID), why); err != nil {
			return false, false, err
		}
	}
	return recorded, found, nil
}

// mustForce reports whether pod p may only be deleted at once: it is
// already Terminating, or its node is gone or not Ready. A node the
// operator may not read counts as Ready (HostDown's Warning
// FailedDetectNodeFailure names the missing permission).
func (n *NodeFailure) mustForce(ctx context.Context, p *corev1.Pod) (bool, error) {
	if p.DeletionTimestamp != nil {
		return true, nil
	}
	if p.Spec.NodeName == "" || n.kube == nil {
		return false, nil
	}
	node, err := n.node(ctx, p.Spec.NodeName)
	if apierrors.IsForbidden(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return node == nil || !conditionTrue(node, corev1.NodeReady), nil
}
