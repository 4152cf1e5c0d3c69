package component

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/label"
)

// MinReadySeconds is how long a restarted pod of component must have been
// Ready before a rollout counts it available: the TidbCluster annotation
// tidb.pingcap.com/<component>-min-ready-seconds, 0 when absent, negative
// or unreadable (an unreadable value must not stop a rollout for good).
// Only the components whose descriptor has MinReady honour it, as the TiDB
// Operator's do (TiProxy has its own, tiproxy/hooks.go).
func MinReadySeconds(tc metav1.Object, component string) time.Duration {
	if d := components.Lookup(component); d == nil || !d.MinReady {
		return 0
	}
	v, ok := tc.GetAnnotations()[label.MinReadySecondsAnnotation(component)]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// readyLongEnough reports whether pod has been Ready for the component's
// MinReadySeconds; during a rollout a restarted pod that has not is not
// yet available, so the planner waits before restarting the next one.
func (m *Manager[O]) readyLongEnough(tc O, pod *corev1.Pod) bool {
	d := m.owner.MinReadySeconds(tc, m.comp.Name())
	if d == 0 || m.clock == nil {
		return true
	}
	since := readySince(pod)
	return !since.IsZero() && m.clock.Since(since) >= d
}

// readySince is when pod's Ready condition last turned true (zero when it
// is not Ready).
func readySince(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
