package component

import (
	"context"

	"github.com/kubetidb/tidb-operator/pkg/manager/planner"
)

// beginRollout lets a RolloutGuard component prepare the rollout before
// the planner's restart of ordinal (its pod may be missing: nil).
func (m *Manager[O]) beginRollout(ctx context.Context, st *syncState[O], ordinal int32) error {
	g, ok := m.comp.(RolloutGuard[O])
	if !ok {
		return nil
	}
	return g.BeginRollout(ctx, st.tc, st.pods[ordinal], st.desired)
}

// endRollout lets a RolloutGuard component end what it began once the
// rollout is over: no pod runs an old revision and every pod is available
// (Ready, healthy in the component's terms).
func (m *Manager[O]) endRollout(ctx context.Context, st *syncState[O], c planner.Component) error {
	g, ok := m.comp.(RolloutGuard[O])
	if !ok || c.Rolling {
		return nil
	}
	for o := int32(0); o < c.Replicas; o++ {
		if p := c.Pods[o]; !p.Updated || !p.Available() {
			return nil
		}
	}
	return g.EndRollout(ctx, st.tc)
}
