package component

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/label"
)

// MaintenanceAnnotations are the pod annotation keys a PodMaintainer acts
// on; the TidbCluster controller syncs a cluster as soon as one of them
// changes on its pods rather than at the next resync.
var MaintenanceAnnotations = []string{
	label.AnnTiKVEvictLeader, label.AnnTiKVEvictLeaderExpiration,
	label.AnnPDTransferLeader, label.AnnPDTransferLeaderExpiration,
	label.AnnTiDBGracefulShutdown, label.AnnReplaceVolume,
}

// maintain lets a PodMaintainer act on its pods' maintenance annotations.
// It runs after the StatefulSet exists and before failover and the
// planner's step, because a user's request (move leaders off, restart a
// pod) is independent of a rollout, and a wait of the rollout must not
// keep it from being seen.
func (m *Manager[O]) maintain(ctx context.Context, st *syncState[O]) error {
	mt, ok := m.comp.(PodMaintainer[O])
	if !ok {
		return nil
	}
	pods, err := m.podsByOrdinal(st)
	if err != nil {
		return err
	}
	if err := mt.MaintainPods(ctx, st.tc, pods); err != nil {
		return fmt.Errorf("maintenance annotations: %w", err)
	}
	return nil
}

// AnnotationExpired reports whether the RFC 3339 time in annotation key of
// pod has passed at now. An absent annotation never expires; an unreadable
// one is returned as an error (and the request it bounds stays in force).
func AnnotationExpired(pod *corev1.Pod, key string, now time.Time) (bool, error) {
	v, ok := pod.Annotations[key]
	if !ok {
		return false, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return false, fmt.Errorf("annotation %s=%q of pod %s is not an RFC 3339 time: %w", key, v, pod.Name, err)
	}
	return !now.Before(t), nil
}

// RecreatedSince reports whether pod is a newer pod than the one created at
// created (the StatefulSet replaced it under the same name).
func RecreatedSince(pod *corev1.Pod, created time.Time) bool {
	return pod.CreationTimestamp.After(created)
}
