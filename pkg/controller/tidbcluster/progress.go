package tidbcluster

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/flow"
)

// ProgressOnly reports whether next differs from written only in what
// shows a cluster's progress: the wording of Ready, Degraded and
// Progressing (not their status), and what each component observed
// (phase, StatefulSet status, image, volumes, members, stores, captures,
// the cluster ID). Such a status may wait a little to be written together
// with the next one (StatusMemory.HoldProgress): a 1/1/1 cluster created
// in one burst then costs about three status writes (its first sync, a
// progress write, Ready), not one per step.
//
// Everything else is written at once: Ready, Degraded or Progressing
// turning (a rollout's start and end), the
// Unsupported condition, a new observedGeneration (a spec edit is
// acknowledged), and every record the operator acts on — failure members
// and stores, tombstones, unjoined members, leader eviction, volume
// replacement, the root password, the DDL owner's resign count.
func ProgressOnly(written, next *v1alpha1.TidbClusterStatus) bool {
	return equality.Semantic.DeepEqual(withoutProgress(written), withoutProgress(next))
}

// withoutProgress is a copy of s with its progress fields cleared.
func withoutProgress(s *v1alpha1.TidbClusterStatus) *v1alpha1.TidbClusterStatus {
	out := s.DeepCopy()
	out.ClusterID = ""
	out.Conditions = nil
	for _, c := range s.Conditions {
		switch c.Type {
		case v1alpha1.TidbClusterReady, v1alpha1.TidbClusterDegraded, v1alpha1.TidbClusterProgressing:
			c = metav1.Condition{Type: c.Type, Status: c.Status, ObservedGeneration: c.ObservedGeneration}
		}
		out.Conditions = append(out.Conditions, c)
	}
	for _, d := range components.All {
		cs := d.Status(out)
		replace := cs.VolReplaceInProgress
		*cs = v1alpha1.ComponentStatus{VolReplaceInProgress: replace}
		if d.ClearObserved != nil {
			d.ClearObserved(out)
		}
	}
	return out
}

// holdProgress holds back next (the status of a sync that waits or ended
// without error) when it only shows progress since written and this process
// wrote tc's status less than the progress interval ago; the sync then
// comes back no later than the status may wait (a sync that ended without
// error is requeued for it). It returns whether the status was held and
// the sync's error, shortened so. An error other than a wait is written at
// once (Degraded turns); an unchanged status (unchanged: tc's equals
// written; every converged resync) is not held.
func (c *defaultControl) holdProgress(tc *v1alpha1.TidbCluster, written *v1alpha1.TidbClusterStatus, unchanged bool,
	syncErr error) (bool, error) {
	re, waiting := flow.AsRequeue(syncErr)
	if (syncErr != nil && !waiting) || unchanged || !ProgressOnly(written, &tc.Status) {
		return false, syncErr
	}
	left, held := c.memory.HoldProgress(tc, &tc.Status)
	if !held {
		return false, syncErr
	}
	// Never back sooner than a second: the sync may have just created an
	// object the cache has not delivered yet (a create again would be a 409).
	left = max(left, time.Second)
	if !waiting {
		return true, &flow.RequeueError{Reason: "status held: it only shows progress since the last write", After: left}
	}
	after := re.After
	if after == 0 {
		after = controller.DefaultWaitDelay
	}
	if after <= left {
		return true, syncErr
	}
	return true, &flow.RequeueError{Reason: syncErr.Error(), After: left}
}
