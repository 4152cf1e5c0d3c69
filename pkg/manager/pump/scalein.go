package pump

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pumpapi"
)

// Event reasons of Pump's scale-in.
const (
	// ReasonOfflineRequested (Normal): the pump of the pod to remove accepted to go offline.
	ReasonOfflineRequested = "PumpOfflineRequested"
	// ReasonOffline (Normal): the pump of the pod to remove is offline; the pod goes.
	ReasonOffline = "PumpOffline"
)

// neverJoinedAfter is how long a pod that is not Ready may be missing from the registry before its
// removal goes on without a pump to take offline: five of the TiDB Operator's 30 s resync periods, as
// it waits.
const neverJoinedAfter = 5 * 30 * time.Second

// PreScaleIn takes the pump of the pod with ordinal (the highest) offline and returns nil once the pod
// may go, as the TiDB Operator does (spec §7.3): only while the StatefulSet has as many pods as it
// asks for, because a pump going offline stops being Ready and the next must not start meanwhile;
// then, by the pump's record in the binlog registry:
//   - online: the pump is asked to go offline (Pump's offline request; a Normal event
//     PumpOfflineRequested and the time on the pod), and the scale-in waits;
//   - pausing, paused or closing: it waits, and so does a pump that refuses the request;
//   - offline: the pod may go (a Normal event PumpOffline); the skeleton then marks its PVC for
//     deferred deletion;
//   - absent: a pod that is not Ready and older than neverJoinedAfter never ran a pump, and may go.
//
// The registry is asked of the other pumps first: a closing pump no longer serves it. When no pump
// serves it — the last pump going offline — the pod may go once the pump that accepted the request
// has exited while its container still runs (exitedOffline). Waits are flow.RequeueErrors; only a
// failure of the operator itself (no write layer, no TLS material) is an error.
func (c *Component) PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if c.pump == nil {
		return flow.Requeue("scale-in of Pump needs the Pump API")
	}
	if sts := tc.Status.Pump.StatefulSet; sts == nil || sts.Replicas != ordinal+1 {
		have := int32(0)
		if sts != nil {
			have = sts.Replicas
		}
		return flow.Requeue("waiting for the Pump StatefulSet to run its %d pods (%d now) before taking one more pump offline", ordinal+1, have)
	}
	podName := names.Pod(tc.Name, names.Pump, ordinal)
	pod, err := c.pod(tc, podName)
	if err != nil {
		return err
	}
	others, err := c.askOrder(tc, ordinal+1, ordinal)
	if err != nil {
		return err
	}
	registry, targetErr := c.readRegistry(ctx, tc, others, podName)
	if registry == nil {
		if exitedOffline(pod, targetErr) {
			return c.release(tc, podName, "its pump exited after accepting to go offline, as Pump does once offline (no pump is left to serve the binlog registry)")
		}
		return flow.Requeue("pump %s: no pump serves the binlog registry: %v", podName, targetErr)
	}
	node := findNode(registry, tc, podName)
	switch {
	case node == nil:
		return c.withoutRecord(tc, pod, podName)
	case node.State == pumpapi.StateOffline:
		return c.release(tc, podName, fmt.Sprintf("the binlog registry says pump %s is offline", node.NodeID))
	case node.State == pumpapi.StateOnline:
		return c.requestOffline(ctx, tc, pod, podName, node)
	default:
		return flow.Requeue("pump %s on %s is %s; waiting until the binlog registry says offline", node.NodeID, podName, node.State)
	}
}

// pod returns the pod from the cache, nil when it does not exist.
func (c *Component) pod(tc *v1alpha1.TidbCluster, name string) (*corev1.Pod, error) {
	if c.pods == nil {
		return nil, nil
	}
	p, err := c.pods.Pods(tc.Namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get pod %s: %w", name, err)
	}
	return p, nil
}

// readRegistry asks the other pumps for the registry, then the pump of podName; it returns the
// registry, or nil and that pump's error.
func (c *Component) readRegistry(ctx context.Context, tc *v1alpha1.TidbCluster, others []string, podName string) (*pumpapi.Status, error) {
	opts := ClientOptions(tc)
	if registry, _, err := pumpapi.GetRegistry(ctx, c.pump, tc.Namespace, tc.Name, others, opts); err == nil {
		return registry, nil
	}
	return c.pump.GetStatus(ctx, tc.Namespace, tc.Name, podName, opts)
}

// findNode returns the registry record of podName's pump: the one whose host names the pod, and among
// several (a pump that lost its data dir registers anew) the one not offline.
func findNode(registry *pumpapi.Status, tc *v1alpha1.TidbCluster, podName string) *pumpapi.NodeStatus {
	var found *pumpapi.NodeStatus
	for _, n := range registry.Sorted() {
		if pod, ok := pumpapi.NodePod(n.Host, tc.Namespace, tc.Name); !ok || pod != podName {
			continue
		}
		if found == nil || found.State == pumpapi.StateOffline {
			found = &n
		}
	}
	return found
}

// withoutRecord decides for a pod whose pump is not in the registry: a pod that does not exist, or is
// not Ready long after it was created, never ran a pump and may go; another may be about to register.
func (c *Component) withoutRecord(tc *v1alpha1.TidbCluster, pod *corev1.Pod, podName string) error {
	switch {
	case pod == nil:
		return c.release(tc, podName, "the pod does not exist and the binlog registry has no pump of it")
	case !component.PodReady(pod) && c.clock.Since(pod.CreationTimestamp.Time) >= neverJoinedAfter:
		return c.release(tc, podName, fmt.Sprintf("the pod has not been Ready for %v and the binlog registry has no pump of it", neverJoinedAfter))
	}
	return flow.Requeue("pump on %s is not in the binlog registry yet", podName)
}

// requestOffline asks the pump to go offline and records the accepted request on the pod; a pump that
// is closing already refuses, which is recorded too when the record is missing (a write that failed).
func (c *Component) requestOffline(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod, podName string, node *pumpapi.NodeStatus) error {
	err := c.pump.Offline(ctx, tc.Namespace, tc.Name, podName, node.NodeID, ClientOptions(tc))
	var refused *pumpapi.RefusedError
	switch {
	case err == nil:
		if err := c.recordRequest(ctx, tc, pod, true); err != nil {
			return err
		}
		c.event(tc, corev1.EventTypeNormal, ReasonOfflineRequested,
			"pump offline requested: pump %s on %s goes offline before its pod is removed", node.NodeID, podName)
		return flow.Requeue("pump %s on %s is going offline", node.NodeID, podName)
	case errors.As(err, &refused) && refused.PumpState() == pumpapi.StateClosing:
		if err := c.recordRequest(ctx, tc, pod, false); err != nil {
			return err
		}
		return flow.Requeue("pump %s on %s is going offline (closing)", node.NodeID, podName)
	case errors.As(err, &refused):
		return flow.Requeue("pump %s on %s refused to go offline: %s", node.NodeID, podName, refused.Message)
	case pumpapi.Unreachable(err) && ctx.Err() == nil:
		return flow.Requeue("pump %s on %s did not answer the offline request: %v", node.NodeID, podName, err)
	}
	return fmt.Errorf("take pump %s on %s offline: %w", node.NodeID, podName, err)
}

// recordRequest records on the pod when its pump accepted to go offline: always for a new acceptance
// (the pump may have restarted since an earlier one), else only when no time is recorded.
func (c *Component) recordRequest(ctx context.Context, tc *v1alpha1.TidbCluster, pod *corev1.Pod, accepted bool) error {
	if pod == nil {
		return nil
	}
	if _, ok := pod.Annotations[label.AnnPumpOfflineRequestedAt]; ok && !accepted {
		return nil
	}
	if c.writer == nil {
		return errors.New("no write layer to record the pump's offline request on its pod")
	}
	return c.writer.AnnotatePod(ctx, tc, pod.Name,
		map[string]string{label.AnnPumpOfflineRequestedAt: c.clock.Now().UTC().Format(time.RFC3339)})
}

// exitedOffline reports whether the pump process that accepted to go offline has exited cleanly: the
// pump does not answer (targetErr is unreachable), and the pump container still runs as it did before
// the accepted request. The start script keeps the container running only after pump exited with
// status 0, which Pump does only once it wrote offline to the registry; after any other exit the
// container restarts, and a restarted pump registers online again.
func exitedOffline(pod *corev1.Pod, targetErr error) bool {
	if pod == nil || !pumpapi.Unreachable(targetErr) {
		return false
	}
	requested, err := time.Parse(time.RFC3339, pod.Annotations[label.AnnPumpOfflineRequestedAt])
	if err != nil {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == containerPump {
			return cs.State.Running != nil && !cs.State.Running.StartedAt.After(requested)
		}
	}
	return false
}

// release lets the pod go: the registry records naming it in status are marked offline (the last
// read may predate it), and a Normal event PumpOffline says why.
func (c *Component) release(tc *v1alpha1.TidbCluster, podName, why string) error {
	for _, m := range tc.Status.Pump.Members {
		if m == nil {
			continue
		}
		if pod, ok := pumpapi.NodePod(m.Host, tc.Namespace, tc.Name); ok && pod == podName {
			m.State = pumpapi.StateOffline
		}
	}
	c.event(tc, corev1.EventTypeNormal, ReasonOffline, "pump on %s is offline: %s; removing the pod", podName, why)
	return nil
}

func (c *Component) event(tc *v1alpha1.TidbCluster, eventType, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(tc, eventType, reason, format, args...)
	}
}
