package ticdc

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/ticdcapi"
)

// Event reasons of the graceful shutdown of a capture, recorded on the TidbCluster.
const (
	// ReasonDrainStarted (Normal): the operator began moving a capture's tables to the other captures.
	ReasonDrainStarted = "TiCDCDrainStarted"
	// ReasonOwnerResigned (Normal): the capture to drain held the owner role and was asked to give it up.
	ReasonOwnerResigned = "TiCDCOwnerResigned"
	// ReasonDrainTimedOut (Warning): the graceful shutdown did not finish within
	// spec.ticdc.gracefulShutdownTimeout; the pod restarts or goes anyway.
	ReasonDrainTimedOut = "TiCDCDrainTimedOut"
)

// defaultGracefulShutdownTimeout bounds a graceful shutdown when the spec (not yet defaulted) has none.
const defaultGracefulShutdownTimeout = 10 * time.Minute

// PreScaleIn shuts the capture of the pod with ordinal down gracefully before the pod is removed; see
// shutdownGracefully. It returns nil once the pod may go, and a flow.RequeueError while it waits.
func (c *Component) PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	return c.shutdownGracefully(ctx, tc, ordinal, false)
}

// PreUpgradePod shuts the capture of the pod with ordinal down gracefully before the pod restarts on
// the new revision; see shutdownGracefully. As in the TiDB Operator, a capture is drained only when
// TiCDC can move tables between the versions involved (drainsAcross); otherwise it restarts at once.
// It returns nil once the pod may restart, and a flow.RequeueError while it waits.
func (c *Component) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	return c.shutdownGracefully(ctx, tc, ordinal, true)
}

// shutdownGracefully moves the work of the capture on pod ordinal to the other captures: if the capture
// is the owner it first resigns the owner role (TiCDC does not drain its owner), then, once TiCDC has an
// owner and is healthy, it asks for the capture to be drained until no table is left on it. The wait
// begins when the pod is annotated with label.AnnTiCDCGracefulShutdownBeginTime (through the write
// layer) and lasts at most spec.ticdc.gracefulShutdownTimeout from that time, so an operator that
// restarts resumes the same wait; past it the pod goes anyway, with a Warning event. A begin time older
// than twice the timeout, or unreadable, is a leftover of a scale-in or rollout that was undone, and a
// new wait begins. There is nothing to wait for — the pod may go at once — when the timeout is 0, the
// pod does not exist, its capture is not running, it is the only capture (nowhere to move its tables),
// or TiCDC predates the APIs (404).
func (c *Component) shutdownGracefully(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32, upgrade bool) error {
	timeout := gracefulShutdownTimeout(tc)
	if c.cdc == nil || c.pods == nil || timeout <= 0 {
		return nil
	}
	podName := names.Pod(tc.Name, names.TiCDC, ordinal)
	pod, err := c.pods.Pods(tc.Namespace).Get(podName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", podName, err)
	}
	w := &shutdown{c: c, tc: tc, pod: pod, upgrade: upgrade, timeout: timeout}
	if w.begin, w.started = c.beginTime(pod, timeout); w.started && !c.clock.Now().Before(w.begin.Add(timeout)) {
		c.event(tc, corev1.EventTypeWarning, ReasonDrainTimedOut, "the graceful shutdown of the TiCDC capture on %s did not finish within %v; %s it anyway",
			podName, timeout, w.verb())
		return nil
	}
	captures, _, err := c.listCaptures(ctx, tc, c.askFirst(tc, podName))
	switch {
	case errors.Is(err, ticdcapi.ErrNotServed):
		return nil
	case err != nil:
		return w.wait(ctx, "cannot list the TiCDC captures to drain %s: %v", podName, err)
	}
	this, owner := findCaptures(tc, captures, podName)
	if this == nil || len(captures) < 2 {
		return nil
	}
	if upgrade {
		drain, err := c.drainsAcross(ctx, tc, podName, this.ID)
		if err != nil {
			return w.wait(ctx, "cannot read the version of the TiCDC capture on %s: %v", podName, err)
		}
		if !drain {
			return nil
		}
	}
	return w.run(ctx, this, owner)
}

// shutdown is one graceful shutdown in progress.
type shutdown struct {
	c       *Component
	tc      *v1alpha1.TidbCluster
	pod     *corev1.Pod
	upgrade bool
	timeout time.Duration
	begin   time.Time
	started bool
}

func (w *shutdown) verb() string {
	if w.upgrade {
		return "restarting"
	}
	return "removing"
}

// start records the beginning of the wait on the pod, once.
func (w *shutdown) start(ctx context.Context) error {
	if w.started {
		return nil
	}
	now := w.c.clock.Now().UTC()
	if w.c.writer == nil {
		return errors.New("no write layer to record the graceful shutdown on the pod")
	}
	if err := w.c.writer.AnnotatePod(ctx, w.tc, w.pod.Name,
		map[string]string{label.AnnTiCDCGracefulShutdownBeginTime: now.Format(time.RFC3339)}); err != nil {
		return err
	}
	w.begin, w.started = now, true
	return nil
}

// wait starts the wait if needed and returns a RequeueError saying why and how long it may last.
func (w *shutdown) wait(ctx context.Context, format string, args ...any) error {
	if err := w.start(ctx); err != nil {
		return err
	}
	left := w.begin.Add(w.timeout).Sub(w.c.clock.Now()).Round(time.Second)
	return flow.Requeue("%s (graceful shutdown before %s it, at most %v more)", fmt.Sprintf(format, args...), w.verb(), left)
}

// run resigns the owner role from the capture this if it holds it, else drains it once TiCDC has an
// owner and is healthy; the drain requests go to the owner's pod, where TiCDC serves them.
func (w *shutdown) run(ctx context.Context, this, owner *ticdcapi.Capture) error {
	c, tc, podName := w.c, w.tc, w.pod.Name
	opts := ClientOptions(tc)
	if !w.started {
		if err := w.start(ctx); err != nil {
			return err
		}
		c.event(tc, corev1.EventTypeNormal, ReasonDrainStarted, "draining TiCDC capture %s on %s before %s it (at most %v)",
			this.ID, podName, w.verb(), w.timeout)
	}
	if this.IsOwner {
		if err := c.cdc.ResignOwner(ctx, tc.Namespace, tc.Name, podName, opts); err != nil && !errors.Is(err, ticdcapi.ErrNotServed) {
			return w.wait(ctx, "TiCDC capture %s on %s could not resign the owner role: %v", this.ID, podName, err)
		}
		c.event(tc, corev1.EventTypeNormal, ReasonOwnerResigned, "TiCDC capture %s on %s resigned the owner role before being drained", this.ID, podName)
		return w.wait(ctx, "TiCDC capture %s on %s is handing the owner role over", this.ID, podName)
	}
	if owner == nil {
		return w.wait(ctx, "waiting for TiCDC to elect an owner before draining %s", podName)
	}
	ownerPod, ok := ticdcapi.CapturePod(owner.Address, tc.Namespace, tc.Name)
	if !ok {
		ownerPod = podName // TiCDC forwards the calls to its owner
	}
	healthy, err := c.cdc.IsHealthy(ctx, tc.Namespace, tc.Name, ownerPod, opts)
	switch {
	case errors.Is(err, ticdcapi.ErrNotServed):
	case err != nil:
		return w.wait(ctx, "cannot check the TiCDC cluster's health before draining %s: %v", podName, err)
	case !healthy:
		return w.wait(ctx, "waiting for the TiCDC cluster to be healthy before draining %s", podName)
	}
	tables, err := c.cdc.DrainCapture(ctx, tc.Namespace, tc.Name, ownerPod, this.ID, opts)
	switch {
	case errors.Is(err, ticdcapi.ErrNotServed):
		return nil // a TiCDC before v6.3 cannot drain
	case err != nil:
		return w.wait(ctx, "draining TiCDC capture %s on %s: %v", this.ID, podName, err)
	case tables > 0:
		return w.wait(ctx, "draining TiCDC capture %s on %s: %d table(s) left", this.ID, podName, tables)
	}
	klog.FromContext(ctx).Info("drained the TiCDC capture", "pod", klog.KObj(w.pod), "capture", this.ID)
	return nil
}

// beginTime reads the pod's begin-time annotation; a value that cannot be read, or older than twice
// the timeout, counts as not started.
func (c *Component) beginTime(pod *corev1.Pod, timeout time.Duration) (time.Time, bool) {
	v := pod.Annotations[label.AnnTiCDCGracefulShutdownBeginTime]
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil || c.clock.Since(t) >= 2*timeout {
		return time.Time{}, false
	}
	return t, true
}

// gracefulShutdownTimeout is spec.ticdc.gracefulShutdownTimeout, 10m when unset.
func gracefulShutdownTimeout(tc *v1alpha1.TidbCluster) time.Duration {
	if d := tc.Spec.TiCDC.GracefulShutdownTimeout; d != nil {
		return d.Duration
	}
	return defaultGracefulShutdownTimeout
}

// askFirst lists the pods to ask for the captures: podName, then the pods of the ready captures in
// status, then every other pod of the spec's ordinals (listCaptures skips repeats).
func (c *Component) askFirst(tc *v1alpha1.TidbCluster, podName string) []string {
	out := []string{podName}
	for _, name := range slices.Sorted(maps.Keys(tc.Status.TiCDC.Captures)) {
		if tc.Status.TiCDC.Captures[name].Ready {
			out = append(out, name)
		}
	}
	for o := range tc.Spec.TiCDC.Replicas {
		out = append(out, names.Pod(tc.Name, names.TiCDC, o))
	}
	return out
}

// findCaptures returns the capture running on podName and the owner, each nil when absent.
func findCaptures(tc *v1alpha1.TidbCluster, captures []ticdcapi.Capture, podName string) (this, owner *ticdcapi.Capture) {
	for i := range captures {
		cp := &captures[i]
		if pod, ok := ticdcapi.CapturePod(cp.Address, tc.Namespace, tc.Name); ok && pod == podName {
			this = cp
		}
		if cp.IsOwner {
			owner = cp
		}
	}
	return this, owner
}

// event records an event on tc when there is a recorder.
func (c *Component) event(tc *v1alpha1.TidbCluster, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(tc, eventType, reason, format, args...)
	}
}
