// Package backup holds the Backup and Restore controllers (spec §9). On
// every sync a controller defaults a copy of the object in memory (never
// written back), validates it, reports an invalid spec through a Warning
// event and the object's Invalid condition and phase, and otherwise runs the
// kind's steps: the Jobs that run cmd/backup-manager (jobs.go, job.go), the
// conditions the controller owns, retries under backoffRetryPolicy
// (retry.go), log backup subcommands (logbackup.go), and on deletion the
// clean Job and the finalizer (deletion.go). The backup-manager inside the
// Jobs writes Running, Complete, Failed and Clean itself.
//
// One generic shell (Controller) serves the kinds; each kind supplies how to
// read, validate, run and delete itself (Kind, built in kinds.go).
package backup

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/metrics"
)

// Event and condition reasons.
const (
	// ReasonFailedValidation is the reason of the Warning event recorded
	// when an object's spec is invalid (the same reason the TidbCluster
	// controller uses).
	ReasonFailedValidation = "FailedValidation"
	// ReasonInvalidSpec is the reason of the Invalid condition.
	ReasonInvalidSpec = "InvalidSpec"
)

// Object is what a kind served by the shell must be.
type Object interface {
	metav1.Object
	runtime.Object
}

// Kind tells the shell how to read, validate and run one kind. Name, Get,
// Validate and Run are required; SyncStatus and InvalidMessage are nil for a
// kind whose status has no place for an Invalid condition.
type Kind[T Object] struct {
	// Name is the kind as users read it in events and logs ("Backup").
	Name string
	// Run syncs a valid object that is not being deleted (the object is the
	// cached copy: Run must not modify it). Its error is the sync's.
	Run func(ctx context.Context, obj T) error
	// Delete syncs an object being deleted, before and instead of
	// validation (nil: nothing to do). Its error is the sync's.
	Delete func(ctx context.Context, obj T) error
	// Gone runs when the object is no longer in the cache (deleted), with
	// its namespace and name (nil: nothing to do). Its error is the sync's.
	Gone func(ctx context.Context, namespace, name string) error
	// Get reads the object from the informer cache; a NotFound error ends
	// the sync (after Gone), any other error is retried.
	Get func(namespace, name string) (T, error)
	// Validate defaults a deep copy of obj and returns the copy's problems;
	// it never modifies obj.
	Validate func(obj T) field.ErrorList
	// SyncStatus makes obj's status report message (the aggregated field
	// errors; "" when valid), writing through the status subresource only
	// when the status changes. It reports whether it wrote; an API error is
	// returned wrapped and retried with backoff by the worker.
	SyncStatus func(ctx context.Context, obj T, message string) (bool, error)
	// InvalidMessage returns the message of obj's True Invalid condition, or
	// "" when there is none, so that a restarted operator does not repeat
	// the Warning event of an invalid spec its predecessor reported.
	InvalidMessage func(obj T) string
	// Unsupported names the fields obj sets that this operator version
	// accepts and does not act on (the kind's registry in
	// pkg/apis/pingcap/v1alpha1/unsupported); nil for none. They are named
	// in one Warning per generation (and, by the kind's SyncStatus, in its
	// Unsupported condition, which never sets the phase).
	Unsupported func(obj T) []string
}

// reported is what the last event of an object said, to record each
// generation's verdict once rather than on every resync.
type reported struct {
	uid        types.UID
	generation int64
	message    string
}

// Controller validates and reports one kind.
type Controller[T Object] struct {
	kind     Kind[T]
	recorder record.EventRecorder
	worker   *controller.Worker

	unknown *controller.UnknownFieldsReporter

	mu          sync.Mutex
	reported    map[string]reported // key -> last event recorded
	unsupported map[string]reported // key -> last Unsupported event recorded
}

// New returns the controller named name (its queue and metric label) for
// kind, fed by informer, recording events with recorder and reconcile
// metrics in m (nil in unit tests). It fails only when the event handler
// cannot be registered (a stopped informer).
func New[T Object](name string, kind Kind[T], informer cache.SharedIndexInformer,
	recorder record.EventRecorder, m *metrics.Metrics) (*Controller[T], error) {
	c := &Controller[T]{kind: kind, recorder: recorder, reported: map[string]reported{}, unsupported: map[string]reported{},
		unknown: controller.NewUnknownFieldsReporter(recorder)}
	c.worker = controller.NewWorker(name, c.sync, m)
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.worker.Enqueue,
		UpdateFunc: func(_, newObj any) { c.worker.Enqueue(newObj) },
		DeleteFunc: c.worker.Enqueue,
	})
	if err != nil {
		return nil, fmt.Errorf("register %s event handler: %w", kind.Name, err)
	}
	return c, nil
}

// Run processes keys with workers goroutines until ctx is done. Caches must
// be synced first.
func (c *Controller[T]) Run(ctx context.Context, workers int) { c.worker.Run(ctx, workers) }

// Worker exposes the queue worker (for tests).
func (c *Controller[T]) Worker() *controller.Worker { return c.worker }

// sync validates the object named by key ("namespace/name") and reports the
// verdict. It returns nil for a valid or deleted object, an IgnoreError for
// an invalid spec (retrying cannot fix it; the next edit or resync syncs it
// again), and a wrapped error to retry when the cache read or the status
// write fails.
func (c *Controller[T]) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return flow.Ignore(err)
	}
	obj, err := c.kind.Get(ns, name)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.reported, key)
		delete(c.unsupported, key)
		c.mu.Unlock()
		if c.kind.Gone != nil {
			return c.kind.Gone(ctx, ns, name)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", c.kind.Name, key, err)
	}
	if obj.GetDeletionTimestamp() != nil {
		if c.kind.Delete == nil {
			return nil
		}
		return c.kind.Delete(ctx, obj)
	}
	if u, ok := any(obj).(controller.UnknownFieldsObject); ok {
		c.unknown.Report(u)
	}
	var message string
	if errs := c.kind.Validate(obj); len(errs) > 0 {
		message = errs.ToAggregate().Error()
	}
	wrote := false
	if c.kind.SyncStatus != nil {
		wrote, err = c.kind.SyncStatus(ctx, obj, message)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.kind.Name, key, err)
		}
		if wrote {
			klog.FromContext(ctx).V(2).Info("status written", "kind", c.kind.Name, "object", klog.KObj(obj), "invalid", message != "")
		}
	}
	// The event follows the status write, so that a failed write (retried)
	// records the event on the attempt that succeeds.
	c.recordOnce(ctx, key, obj, message)
	if message != "" {
		return flow.Ignore(fmt.Errorf("%s %s has an invalid spec: %s", c.kind.Name, key, message))
	}
	c.warnUnsupported(key, obj)
	if wrote {
		// The cached object predates the write that removed the Invalid
		// condition: run on the next sync, from the object the write made.
		return flow.RequeueAfter(controller.ChildUpdateDelay, "%s %s is valid again", c.kind.Name, key)
	}
	return c.kind.Run(ctx, obj)
}

// unsupportedMessage is the message naming fields, or "" for none.
func unsupportedMessage(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return "accepted but not acted on by this operator version: " + strings.Join(fields, ", ")
}

// warnUnsupported records a Warning naming the fields obj sets that are
// not acted on, once per generation and list.
func (c *Controller[T]) warnUnsupported(key string, obj T) {
	if c.kind.Unsupported == nil {
		return
	}
	msg := unsupportedMessage(c.kind.Unsupported(obj))
	now := reported{uid: obj.GetUID(), generation: obj.GetGeneration(), message: msg}
	c.mu.Lock()
	last, seen := c.unsupported[key]
	c.unsupported[key] = now
	c.mu.Unlock()
	if msg != "" && (!seen || last != now) {
		c.recorder.Event(obj, corev1.EventTypeWarning, ReasonUnsupported, msg)
	}
}

// recordOnce records the verdict on obj unless the same verdict was already
// recorded for this generation of this object (by this process, or, for an
// invalid spec, by a predecessor whose Invalid condition says the same).
func (c *Controller[T]) recordOnce(ctx context.Context, key string, obj T, message string) {
	now := reported{uid: obj.GetUID(), generation: obj.GetGeneration(), message: message}
	c.mu.Lock()
	last, seen := c.reported[key]
	c.reported[key] = now
	c.mu.Unlock()
	if seen && last == now {
		return
	}
	if !seen && message != "" && c.kind.InvalidMessage != nil && c.kind.InvalidMessage(obj) == message {
		return
	}
	if message == "" {
		// A valid object reports each step by its own events.
		return
	}
	gen := obj.GetGeneration()
	klog.FromContext(ctx).Info("invalid spec", "kind", c.kind.Name, "object", klog.KObj(obj), "generation", gen, "errors", message)
	c.recorder.Eventf(obj, corev1.EventTypeWarning, ReasonFailedValidation,
		"invalid spec (generation %d), nothing is run until it is fixed: %s", gen, message)
}
