package component

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
)

// takeover writes once a StatefulSet another operator made (the TiDB
// Operator v1: it carries no applied hash of ours), before the rollout
// step looks at it. The write layer keeps its pod template when it means
// the same as ours (apply.SameTemplateMeaning), so no pod restarts; it
// records our template's hash, sets the owner and labels, and drops v1's
// last-applied annotation. When the template means something else, ours
// is written with the partition at the replicas, and the next syncs roll
// the pods one at a time as for any change. The sync then waits for the
// cache to see the write.
func (m *Manager[O]) takeover(ctx context.Context, st *syncState[O]) error {
	live := st.live
	if live == nil || live.DeletionTimestamp != nil || live.Annotations[apply.AnnAppliedHash] != "" {
		return nil
	}
	if _, err := m.writer.StatefulSet(ctx, st.tc, st.desired.DeepCopy()); err != nil {
		return err
	}
	return flow.Requeue("took over StatefulSet %s", live.Name)
}
