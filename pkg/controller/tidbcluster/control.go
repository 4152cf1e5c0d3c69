package tidbcluster

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/members"
	"github.com/kubetidb/tidb-operator/pkg/metrics"
)

// Event reasons recorded on a TidbCluster.
const (
	ReasonFailedValidation = "FailedValidation"
)

// Component is one step of a cluster sync (discovery, PD, TiKV, TiDB …),
// as package members registers them. Components run in the order given;
// the first that returns an error ends the sync. Sync may change tc.Status
// (the in-memory status written once at the end) and nothing else of tc.
type Component = component.Member

// ControlInterface reconciles one TidbCluster.
type ControlInterface interface {
	// UpdateTidbCluster syncs tc (a copy the caller owns) and writes its
	// status once. It returns a RequeueError while waiting, an IgnoreError
	// for an invalid spec, and other errors to retry.
	UpdateTidbCluster(ctx context.Context, tc *v1alpha1.TidbCluster) error
}

type defaultControl struct {
	components []Component
	stateful   []component.Component[*v1alpha1.TidbCluster] // the StatefulSet components, for conditions and metrics
	built      map[string]bool                              // names of the components, for what is not acted on yet
	checked    checkedObjects                               // the object versions whose built objects passed the checks
	status     StatusUpdater
	recorder   record.EventRecorder
	metrics    *metrics.Metrics
	memory     *StatusMemory
	// cli is the command line, for the features a missing cluster-wide
	// permission denies (deniedFeatures); nil holds every permission.
	cli *controller.CLIConfig
}

// NewDefaultControl returns the control that defaults, validates, runs the
// components in order and writes status through updater. memory (may be
// nil) supplies the last status written and lets converged clusters skip
// PD and TiDB between refreshes.
func NewDefaultControl(components []Component, updater StatusUpdater, recorder record.EventRecorder,
	m *metrics.Metrics, memory *StatusMemory) ControlInterface {
	built := map[string]bool{}
	for _, comp := range components {
		built[comp.Name()] = true
	}
	return &defaultControl{components: components, stateful: members.Components(components), built: built,
		status: updater, recorder: recorder, metrics: m, memory: memory}
}

func (c *defaultControl) UpdateTidbCluster(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	logger := klog.FromContext(ctx).WithValues("tidbcluster", klog.KObj(tc))
	ctx = klog.NewContext(ctx, logger)
	start := c.memory.now()
	observation := c.memory.Recall(tc) // the cache may lag behind our own last status write
	ctx = flow.WithObservation(ctx, observation)
	// What the API server has of what the sync writes: its status, under
	// the cluster's name and UID (the spec is not copied: nothing reads it).
	live := &v1alpha1.TidbCluster{TypeMeta: tc.TypeMeta, ObjectMeta: *tc.ObjectMeta.DeepCopy(), Status: *tc.Status.DeepCopy()}
	original := &live.Status
	if pending := c.memory.Pending(tc); pending != nil {
		tc.Status = *pending // what the last sync computed and held back
	}
	defaulting.SetTidbClusterDefaults(tc)
	c.recordSpecReplicas(tc)

	ctx, blockers := flow.WithBlockers(ctx)
	ctx, revisits := flow.WithRevisits(ctx)
	ctx = flow.WithMemo(ctx)
	syncErr := c.validate(ctx, tc, original)
	if syncErr == nil {
		c.setUnsupported(tc, original, append(unsupportedFields(tc, c.built), deniedFeatures(c.cli, tc)...))
		syncErr = c.runComponents(ctx, tc)
		if syncErr == nil {
			// Work members started and come back to (a PVC being expanded)
			// keeps the cluster Progressing and brings the next sync.
			syncErr = revisits.Err()
		}
		if apierrors.IsInvalid(syncErr) {
			syncErr = c.refused(tc, original, syncErr)
		}
	}
	c.setConditions(tc, syncErr, blockers.List())
	c.reportUnknownFields(tc, original)
	tc.Status.ObservedGeneration = tc.Generation

	// Every converged resync compares the status: once, here.
	unchanged := equality.Semantic.DeepEqual(original, &tc.Status)
	if held, shortened := c.holdProgress(tc, original, unchanged, syncErr); held {
		c.countOutcome(tc, syncErr)
		return shortened
	}
	wrote, err := false, error(nil)
	if !unchanged {
		wrote, err = c.status.UpdateStatus(ctx, live, &tc.Status)
	}
	if err != nil {
		c.memory.Forget(tc.UID)
		c.countError(tc, "cluster_status")
		return errors.Join(syncErr, err)
	}
	// Members are reused only after a sync that found nothing new: right
	// after Ready, PD may still be moving region leaders between stores.
	converged := syncErr == nil && !wrote && meta.IsStatusConditionTrue(tc.Status.Conditions, v1alpha1.TidbClusterReady)
	c.memory.Remember(tc, &tc.Status, start, observation, converged, wrote)
	c.countOutcome(tc, syncErr)
	return syncErr
}

// ObjectChecker is a Component that can build every object it would write
// and check them as the API server would, without writing anything.
type ObjectChecker interface {
	// CheckObjects returns what the API server would refuse in the objects
	// built for the defaulted, valid tc; empty when all may be written.
	CheckObjects(tc *v1alpha1.TidbCluster) field.ErrorList
}

// LiveChecker is a Component whose live objects say what they were built
// from: CheckLive returns the update rules tc breaks against them
// (validation.ValidateLive), the operator's stand-in for the old object of
// an update, which it never sees. It runs on every sync, because the live
// objects change without the spec changing.
type LiveChecker interface {
	CheckLive(ctx context.Context, tc *v1alpha1.TidbCluster) field.ErrorList
}

// validate checks the spec, then — because a sync that writes some objects
// and is refused the next leaves a half-applied change — every object the
// components would build from it, and the update rules against the live
// objects (LiveChecker). It records a Warning event when the spec turns
// invalid (or its errors change) and returns an IgnoreError: retrying
// cannot fix a spec.
func (c *defaultControl) validate(ctx context.Context, tc *v1alpha1.TidbCluster, original *v1alpha1.TidbClusterStatus) error {
	errs := validation.ValidateTidbCluster(tc)
	if len(errs) == 0 {
		for _, comp := range c.components {
			if checker, ok := comp.(LiveChecker); ok {
				errs = append(errs, checker.CheckLive(ctx, tc)...)
			}
		}
	}
	if len(errs) == 0 && !c.checked.has(tc) {
		for _, comp := range c.components {
			if checker, ok := comp.(ObjectChecker); ok {
				errs = append(errs, checker.CheckObjects(tc)...)
			}
		}
		if len(errs) == 0 {
			c.checked.add(tc)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	err := errs.ToAggregate()
	prev := meta.FindStatusCondition(original.Conditions, v1alpha1.TidbClusterDegraded)
	if prev == nil || prev.Reason != ReasonInvalidSpec || prev.Message != err.Error() ||
		prev.ObservedGeneration != tc.Generation {
		c.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonFailedValidation, "invalid spec: %v", err)
	}
	return flow.Ignore(&invalidSpecError{err: err})
}

// refused turns a write the API server refused as invalid (HTTP 422),
// which the checks before the first write did not foresee, into an invalid
// spec: retrying cannot make the API server accept the same object, so the
// sync stops with a Warning event and Degraded=True until the spec changes.
func (c *defaultControl) refused(tc *v1alpha1.TidbCluster, original *v1alpha1.TidbClusterStatus, err error) error {
	prev := meta.FindStatusCondition(original.Conditions, v1alpha1.TidbClusterDegraded)
	if prev == nil || prev.Reason != ReasonInvalidSpec || prev.Message != err.Error() || prev.ObservedGeneration != tc.Generation {
		c.recorder.Eventf(tc, corev1.EventTypeWarning, ReasonFailedValidation, "the API server refused an object built from the spec: %v", err)
	}
	return flow.Ignore(&invalidSpecError{err: err})
}

func (c *defaultControl) runComponents(ctx context.Context, tc *v1alpha1.TidbCluster) error {
	ctx, events := apply.WithEventBatch(ctx)
	defer events.Flush(c.recorder, tc)
	for _, comp := range c.components {
		if err := comp.Sync(ctx, tc); err != nil {
			if _, waiting := flow.AsRequeue(err); !waiting {
				c.countError(tc, comp.Name())
			}
			return fmt.Errorf("%s: %w", comp.Name(), err)
		}
	}
	return nil
}

// setConditions derives Ready from the observed status, Degraded from the
// sync error, and Progressing from both; what components found blocking
// their pods (blockers) is added to a Ready or Progressing that is not
// satisfied, so a wait names its cause.
func (c *defaultControl) setConditions(tc *v1alpha1.TidbCluster, syncErr error, blockers []string) {
	conds := &tc.Status.Conditions
	gen := tc.Generation
	var invalid *invalidSpecError
	switch {
	case errors.As(syncErr, &invalid):
		setCondition(conds, metav1.Condition{Type: v1alpha1.TidbClusterReady, Status: metav1.ConditionFalse,
			Reason: ReasonInvalidSpec, Message: "the spec is invalid; see the Degraded condition"}, gen)
		setCondition(conds, metav1.Condition{Type: v1alpha1.TidbClusterDegraded, Status: metav1.ConditionTrue,
			Reason: ReasonInvalidSpec, Message: invalid.Error()}, gen)
		setCondition(conds, metav1.Condition{Type: v1alpha1.TidbClusterProgressing, Status: metav1.ConditionFalse,
			Reason: ReasonInvalidSpec, Message: "nothing is applied until the spec is fixed"}, gen)
		return
	}
	ready := readyCondition(tc, c.stateful)
	setCondition(conds, ready, gen)
	degraded := metav1.Condition{Type: v1alpha1.TidbClusterDegraded, Status: metav1.ConditionFalse,
		Reason: ReasonAsExpected, Message: "the last sync met no error"}
	progressing := metav1.Condition{Type: v1alpha1.TidbClusterProgressing, Status: metav1.ConditionFalse,
		Reason: ReasonConverged, Message: "the cluster matches its spec"}
	if re, waiting := flow.AsRequeue(syncErr); waiting {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, ReasonReconciling, re.Reason
	} else if syncErr != nil {
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, ReasonSyncError, syncErr.Error()
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, ReasonSyncError, syncErr.Error()
	} else if ready.Status != metav1.ConditionTrue {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, ready.Reason, ready.Message
	}
	if ready.Reason == ReasonSuspended && fullySuspended(tc, c.stateful) && syncErr == nil {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionFalse, ReasonSuspended, ready.Message
	}
	if tc.Spec.Paused {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionFalse, ReasonPaused,
			"spec.paused is set: status is observed but no object is written"
	}
	if len(blockers) > 0 {
		because := " (blocked by: " + strings.Join(blockers, "; ") + ")"
		if ready.Status != metav1.ConditionTrue {
			ready.Message += because
			setCondition(conds, ready, gen)
		}
		if progressing.Status == metav1.ConditionTrue {
			progressing.Message += because
		}
	}
	setCondition(conds, degraded, gen)
	setCondition(conds, progressing, gen)
}

func (c *defaultControl) recordSpecReplicas(tc *v1alpha1.TidbCluster) {
	if c.metrics == nil {
		return
	}
	for comp, replicas := range c.specReplicas(tc) {
		c.metrics.SetSpecReplicas(tc.Namespace, tc.Name, comp, replicas)
	}
}

func (c *defaultControl) countError(tc *v1alpha1.TidbCluster, component string) {
	if c.metrics != nil {
		c.metrics.ClusterUpdateError(tc.Namespace, tc.Name, component)
	}
}

func (c *defaultControl) countOutcome(tc *v1alpha1.TidbCluster, err error) {
	if c.metrics == nil {
		return
	}
	outcome := "done"
	if _, waiting := flow.AsRequeue(err); waiting {
		outcome = "wait"
	} else if flow.IsIgnore(err) {
		outcome = "invalid"
	} else if err != nil {
		outcome = "error"
	}
	c.metrics.ClusterSynced(tc.Namespace, tc.Name, outcome)
}

// specReplicas lists the desired replicas of every registered component
// the spec has.
func (c *defaultControl) specReplicas(tc *v1alpha1.TidbCluster) map[string]int32 {
	out := map[string]int32{}
	for _, comp := range c.stateful {
		if comp.Enabled(tc) {
			out[comp.Name()] = comp.Replicas(tc)
		}
	}
	return out
}

type invalidSpecError struct{ err error }

func (e *invalidSpecError) Error() string { return e.err.Error() }
func (e *invalidSpecError) Unwrap() error { return e.err }
