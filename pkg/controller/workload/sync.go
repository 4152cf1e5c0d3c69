// Package workload is the sync the TidbDashboard and TidbNGMonitoring
// controllers share: each is one StatefulSet (with its Services and an
// optional ConfigMap) serving one TidbCluster. A sync validates, finds the
// cluster (missing ⇒ a condition and a Warning, retried when it appears),
// names what is accepted but not acted on, honours paused and
// suspendAction, applies the objects through the write layer (zero writes
// when converged) and computes the status the controllers write once.
package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	listers "github.com/kubetidb/tidb-operator/pkg/client/listers/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/precheck"
)

// Condition types and the reasons (also event reasons) a sync reports.
const (
	ConditionReady       = "Ready"
	ConditionUnsupported = "Unsupported"

	ReasonReady            = "StatefulSetReady"
	ReasonNotReady         = "StatefulSetNotReady"
	ReasonClusterNotFound  = "ClusterNotFound"
	ReasonFailedValidation = "FailedValidation"
	ReasonSyncFailed       = "SyncFailed"
	ReasonPaused           = "Paused"
	ReasonSuspended        = "Suspended"
	ReasonUnsupported      = "Unsupported"
	ReasonAllSupported     = "AllFieldsSupported"
)

// Status is the observed state both kinds report (the TidbDashboard at its
// status' top level, the TidbNGMonitoring partly under status.ngMonitoring).
type Status struct {
	ObservedGeneration int64
	Conditions         []metav1.Condition
	Synced             bool
	Phase              v1alpha1.MemberPhase
	StatefulSet        *appsv1.StatefulSetStatus
}

// Desired are the objects one sync writes, in order: Services, ConfigMap
// (nil for none), StatefulSet.
type Desired struct {
	Services    []*corev1.Service
	ConfigMap   *corev1.ConfigMap
	StatefulSet *appsv1.StatefulSet
}

// Request is one sync of one workload.
type Request struct {
	// Owner is the custom resource; it owns every object written.
	Owner apply.Owner
	// Status is the status last written.
	Status Status
	// Invalid says why the spec cannot be acted on ("" when it can).
	Invalid string
	// Cluster is the TidbCluster served (namespace filled in).
	Cluster v1alpha1.TidbClusterRef
	// Paused stops every write; Suspend deletes the StatefulSet.
	Paused, Suspend bool
	// Unsupported names the fields accepted but not acted on.
	Unsupported []string
	// StatefulSetName is the name Build gives the StatefulSet.
	StatefulSetName string
	// PodLabels select the workload's pods and PVCs.
	PodLabels map[string]string
	// PVReclaimPolicy is given to the PVs of its PVCs; "" is Retain.
	PVReclaimPolicy corev1.PersistentVolumeReclaimPolicy
	// Build returns the objects for the cluster served.
	Build func(tc *v1alpha1.TidbCluster) (Desired, error)
}

// Syncer runs Requests: it reads the TidbCluster, StatefulSet, PVC and PV
// caches and writes through the Applier; Recorder receives the Warnings.
// PVCs and PVs may be nil (PVs are then left as provisioned).
type Syncer struct {
	Clusters     listers.TidbClusterLister
	StatefulSets appslisters.StatefulSetLister
	PVCs         corelisters.PersistentVolumeClaimLister
	PVs          corelisters.PersistentVolumeLister
	Writer       *apply.Applier
	Recorder     record.EventRecorder
	// PVsDenied, when set, names in Unsupported what a workload with PVCs
	// misses because the operator may not patch PVs (PVs is then nil).
	PVsDenied string
}

// Sync reconciles r and returns the status to write. The error is an
// IgnoreError for an invalid spec or objects that cannot be built or that
// the API server would refuse (pkg/manager/precheck; a Warning
// FailedValidation says why, nothing is written; retrying cannot help), an API error
// to retry, or nil. A missing cluster is no error: the status and a
// Warning ClusterNotFound say so, and the controller syncs again when the
// cluster appears.
func (s *Syncer) Sync(ctx context.Context, r Request) (Status, error) {
	prev := r.Status
	st := Status{ObservedGeneration: r.Owner.GetGeneration(), Phase: prev.Phase, StatefulSet: prev.StatefulSet,
		Conditions: append([]metav1.Condition(nil), prev.Conditions...)}
	if r.Invalid != "" {
		return s.invalid(st, prev, r, r.Invalid)
	}
	s.setUnsupported(&st, prev, r)
	tc, err := s.Clusters.TidbClusters(r.Cluster.Namespace).Get(r.Cluster.Name)
	if apierrors.IsNotFound(err) {
		msg := fmt.Sprintf("TidbCluster %s/%s not found", r.Cluster.Namespace, r.Cluster.Name)
		if c := meta.FindStatusCondition(prev.Conditions, ConditionReady); c == nil || c.Reason != ReasonClusterNotFound {
			s.Recorder.Event(r.Owner, corev1.EventTypeWarning, ReasonClusterNotFound, msg)
		}
		s.setReady(&st, false, ReasonClusterNotFound, msg)
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("get TidbCluster %s/%s: %w", r.Cluster.Namespace, r.Cluster.Name, err)
	}
	live, err := s.StatefulSets.StatefulSets(r.Owner.GetNamespace()).Get(r.StatefulSetName)
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return st, fmt.Errorf("get StatefulSet %s: %w", r.StatefulSetName, err)
	}
	switch {
	case r.Paused:
		s.observe(&st, live)
		s.setReady(&st, isReady(live), ReasonPaused, "paused: the operator writes nothing")
		return st, nil
	case r.Suspend:
		return s.suspend(ctx, st, r, live)
	}
	desired, err := r.Build(tc)
	if err != nil {
		return s.invalid(st, prev, r, err.Error())
	}
	if errs := precheck.Objects(desired.Objects()); len(errs) > 0 {
		// The API server would refuse one of them (a toleration operator
		// Maybe in the StatefulSet) after the Services were written.
		return s.invalid(st, prev, r, "the objects built from the spec would be refused: "+errs.ToAggregate().Error())
	}
	applied, err := s.apply(ctx, r.Owner, desired)
	if err != nil {
		st.Synced = false
		s.setReady(&st, false, ReasonSyncFailed, err.Error())
		return st, err
	}
	if err := s.reclaim(ctx, r); err != nil {
		st.Synced = false
		return st, err
	}
	st.Synced = true
	s.observe(&st, applied)
	return st, nil
}

// apply writes desired in order and returns the StatefulSet written (or
// the live one when nothing changed).
func (s *Syncer) apply(ctx context.Context, owner apply.Owner, desired Desired) (*appsv1.StatefulSet, error) {
	for _, svc := range desired.Services {
		if _, err := s.Writer.Service(ctx, owner, svc); err != nil {
			return nil, err
		}
	}
	if desired.ConfigMap != nil {
		if _, err := s.Writer.ConfigMap(ctx, owner, desired.ConfigMap); err != nil {
			return nil, err
		}
	}
	return s.Writer.StatefulSet(ctx, owner, desired.StatefulSet)
}

// suspend deletes the StatefulSet (foreground; Services and PVCs stay) and
// reports the Suspend phase; resuming is the ordinary apply.
func (s *Syncer) suspend(ctx context.Context, st Status, r Request, live *appsv1.StatefulSet) (Status, error) {
	st.Phase, st.StatefulSet = v1alpha1.SuspendPhase, nil
	s.setReady(&st, false, ReasonSuspended, "suspended by spec.suspendAction.suspendStatefulSet")
	if live == nil {
		st.Synced = true
		return st, nil
	}
	if live.DeletionTimestamp != nil {
		return st, flow.Requeue("waiting for StatefulSet %s to be deleted", live.Name)
	}
	if err := s.Writer.DeleteStatefulSet(ctx, r.Owner, live.Name, "suspendAction.suspendStatefulSet"); err != nil && !apierrors.IsNotFound(err) {
		st.Synced = false
		return st, err
	}
	return st, flow.Requeue("waiting for StatefulSet %s to be deleted", live.Name)
}

// invalid reports a spec that cannot be acted on: Ready False, one Warning
// per generation, no retry.
func (s *Syncer) invalid(st, prev Status, r Request, why string) (Status, error) {
	c := meta.FindStatusCondition(prev.Conditions, ConditionReady)
	if c == nil || c.Reason != ReasonFailedValidation || c.ObservedGeneration != st.ObservedGeneration || c.Message != why {
		s.Recorder.Event(r.Owner, corev1.EventTypeWarning, ReasonFailedValidation, why)
	}
	st.Synced = false
	s.setReady(&st, false, ReasonFailedValidation, why)
	return st, flow.Ignore(errors.New(why))
}

// observe copies the StatefulSet's status and derives phase and Ready.
func (s *Syncer) observe(st *Status, sts *appsv1.StatefulSet) {
	if sts == nil {
		st.StatefulSet = nil
		st.Phase = v1alpha1.NormalPhase
		s.setReady(st, false, ReasonNotReady, "StatefulSet not created yet")
		return
	}
	status := sts.Status.DeepCopy()
	st.StatefulSet = status
	st.Phase = v1alpha1.NormalPhase
	if rollingOut(sts) {
		st.Phase = v1alpha1.UpgradePhase
	}
	if isReady(sts) {
		s.setReady(st, true, ReasonReady, fmt.Sprintf("StatefulSet %s is ready", sts.Name))
		return
	}
	s.setReady(st, false, ReasonNotReady, fmt.Sprintf("StatefulSet %s: %d of %d replicas ready and updated",
		sts.Name, min(status.ReadyReplicas, status.UpdatedReplicas), replicas(sts)))
}

func (s *Syncer) setReady(st *Status, ready bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionReady, Status: status,
		Reason: reason, Message: msg, ObservedGeneration: st.ObservedGeneration})
}

// rollingOut reports a StatefulSet whose controller has not yet seen its
// spec or whose pods do not all run the newest revision.
func rollingOut(sts *appsv1.StatefulSet) bool {
	return sts.Status.ObservedGeneration < sts.Generation ||
		(sts.Status.UpdateRevision != "" && sts.Status.CurrentRevision != sts.Status.UpdateRevision)
}

// isReady reports every replica ready on the newest revision.
func isReady(sts *appsv1.StatefulSet) bool {
	if sts == nil || rollingOut(sts) {
		return false
	}
	want := replicas(sts)
	return sts.Status.ReadyReplicas == want && sts.Status.UpdatedReplicas == want
}

func replicas(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

// StatusPatch returns a JSON patch that replaces the whole status of the
// object with uid by status, and fails (the test op) when the object was
// recreated meanwhile. Unlike an update it needs no resourceVersion, so a
// cache that lags behind the last status write causes no conflict.
func StatusPatch(uid types.UID, status any) ([]byte, error) {
	b, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": uid},
		{"op": "add", "path": "/status", "value": status},
	})
	if err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	return b, nil
}

// Objects lists d in the order a sync writes it: Services, the ConfigMap
// (when there is one), the StatefulSet.
func (d Desired) Objects() []metav1.Object {
	out := make([]metav1.Object, 0, len(d.Services)+2)
	for _, svc := range d.Services {
		out = append(out, svc)
	}
	if d.ConfigMap != nil {
		out = append(out, d.ConfigMap)
	}
	if d.StatefulSet != nil {
		out = append(out, d.StatefulSet)
	}
	return out
}
