package dmcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/unsupported"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/validation"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// Member is one step of a DMCluster sync (discovery, dm-master, dm-worker).
// Sync may change dc.Status and nothing else of dc; a wait is a
// flow.RequeueError.
type Member interface {
	// Name labels logs, e.g. "dm-master".
	Name() string
	// Sync reconciles the member's objects for the defaulted, valid dc.
	Sync(ctx context.Context, dc *v1alpha1.DMCluster) error
}

// Event and condition reasons of the DMCluster controller.
const (
	ReasonFailedValidation = "FailedValidation"
	ReasonUnsupported      = "Unsupported"
	ReasonAllSupported     = "AllSupported"
	ConditionUnsupported   = "Unsupported"
)

// Control runs one DMCluster sync: defaults in memory, validation (an
// invalid spec is reported and nothing is written but status), the members
// in order — the first one's error (discovery) ends the sync, the errors of
// the others are collected so dm-worker still syncs while dm-master waits —
// the Ready condition, and one status write when status changed.
type Control struct {
	members  []Member
	client   versioned.Interface
	recorder record.EventRecorder
	unknown  *controller.UnknownFieldsReporter
}

// NewControl returns the control over members, writing status with client.
func NewControl(members []Member, client versioned.Interface, recorder record.EventRecorder) *Control {
	return &Control{members: members, client: client, recorder: recorder,
		unknown: controller.NewUnknownFieldsReporter(recorder)}
}

// Sync reconciles dc (a copy it may change). It returns the members'
// errors, joined, for the queue to retry; an invalid spec returns nil, as
// retrying cannot fix it.
func (c *Control) Sync(ctx context.Context, dc *v1alpha1.DMCluster) error {
	prev := dc.Status.DeepCopy()
	defaulting.DefaultDMCluster(dc)
	if errs := validation.ValidateDMCluster(dc); len(errs) > 0 {
		msg := errs.ToAggregate().Error()
		if old := meta.FindStatusCondition(prev.Conditions, "Ready"); old == nil || old.Reason != ReasonFailedValidation || old.Message != msg {
			c.recorder.Event(dc, corev1.EventTypeWarning, ReasonFailedValidation, msg)
		}
		meta.SetStatusCondition(&dc.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
			Reason: ReasonFailedValidation, Message: msg, ObservedGeneration: dc.Generation})
		return c.writeStatus(ctx, dc, prev)
	}
	c.setUnsupported(dc, prev)
	var errs, waits []error
	for i, m := range c.members {
		err := m.Sync(ctx, dc)
		if err == nil {
			continue
		}
		if _, wait := flow.AsRequeue(err); wait {
			waits = append(waits, err)
		} else {
			klog.FromContext(ctx).Error(err, "member sync failed", "member", m.Name())
			errs = append(errs, fmt.Errorf("%s: %w", m.Name(), err))
		}
		if i == 0 {
			break
		}
	}
	setReady(dc)
	if err := c.writeStatus(ctx, dc, prev); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 && len(waits) > 0 {
		return waits[0] // the first wait sets when to look again
	}
	return errors.Join(errs...)
}

// setUnsupported names what dc sets that nothing acts on (the registry's
// DMCluster fields, delete-slots annotations and unknown fields of
// pass-through types) in the
// Unsupported condition, with a Warning when the list changes.
func (c *Control) setUnsupported(dc *v1alpha1.DMCluster, prev *v1alpha1.DMClusterStatus) {
	fields := unsupported.Fields(unsupported.DMCluster, dc)
	for _, key := range validation.DMDeleteSlotsAnnotations {
		if v := strings.TrimSpace(dc.Annotations[key]); v != "" && v != "[]" {
			fields = append(fields, "metadata.annotations."+key+" (needs Advanced StatefulSet; scale-in removes the highest ordinals)")
		}
	}
	if msg := c.unknown.Report(dc); msg != "" {
		fields = append(fields, msg)
	}
	if len(fields) == 0 {
		if meta.FindStatusCondition(dc.Status.Conditions, ConditionUnsupported) != nil {
			meta.SetStatusCondition(&dc.Status.Conditions, metav1.Condition{Type: ConditionUnsupported,
				Status: metav1.ConditionFalse, Reason: ReasonAllSupported, Message: "every field set is acted on",
				ObservedGeneration: dc.Generation})
		}
		return
	}
	msg := "accepted but not acted on by this operator version: " + strings.Join(fields, ", ")
	if old := meta.FindStatusCondition(prev.Conditions, ConditionUnsupported); old == nil || old.Status != metav1.ConditionTrue || old.Message != msg {
		c.recorder.Event(dc, corev1.EventTypeWarning, ReasonUnsupported, msg)
	}
	meta.SetStatusCondition(&dc.Status.Conditions, metav1.Condition{Type: ConditionUnsupported, Status: metav1.ConditionTrue,
		Reason: ReasonUnsupported, Message: msg, ObservedGeneration: dc.Generation})
}

// writeStatus replaces dc's status when it differs from prev, by a JSON
// patch of the status subresource guarded by the object's UID (the operator
// is status's only writer, so a spec edit never turns it into a conflict).
func (c *Control) writeStatus(ctx context.Context, dc *v1alpha1.DMCluster, prev *v1alpha1.DMClusterStatus) error {
	if equality.Semantic.DeepEqual(prev, &dc.Status) {
		return nil
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": dc.UID},
		{"op": "add", "path": "/status", "value": dc.Status},
	})
	if err != nil {
		return fmt.Errorf("encode status of DMCluster %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	_, err = c.client.PingcapV1alpha1().DMClusters(dc.Namespace).Patch(ctx, dc.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("update status of DMCluster %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	return nil
}
