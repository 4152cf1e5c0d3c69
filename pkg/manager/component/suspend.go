package component

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/defaulting"
	"github.com/kubetidb/tidb-operator/pkg/names"
)

// Suspended reports whether tc asks to suspend the component name
// (spec.<component>.suspendAction, else spec.suspendAction).
func Suspended(tc *v1alpha1.TidbCluster, name string) bool {
	a := defaulting.NewComponentAccessor(tc, defaulting.Component(name)).SuspendAction()
	return a != nil && a.SuspendStatefulSet
}

// suspend carries out suspendAction.suspendStatefulSet: in the reverse of
// the sync order (TiCDC first, PD last), each component whose dependents
// are already suspended and that is neither upgrading nor scaling has its
// StatefulSet deleted in the foreground — its pods stop, its PVCs and
// their data stay — and reports phase Suspend; the rest of its sync is
// skipped while the action stays. Until its turn a component syncs as
// usual. Removing the action ends the suspension: the next sync creates
// the StatefulSet again on the same PVCs.
func (m *Manager[O]) suspend(ctx context.Context, st *syncState[O]) error {
	tc := st.tc
	if !m.owner.Suspended(tc, m.comp.Name()) {
		return nil
	}
	status := m.comp.Status(tc)
	if st.live == nil || st.live.DeletionTimestamp != nil {
		status.Phase = v1alpha1.SuspendPhase
		return errStop
	}
	if waiting := m.dependentsRunning(tc); waiting != "" || status.Phase != v1alpha1.NormalPhase {
		return nil // its turn comes after its dependents, and after a rollout or scaling ends
	}
	if err := m.writer.DeleteStatefulSet(ctx, tc, st.live.Name, "suspendAction.suspendStatefulSet"); err != nil {
		return fmt.Errorf("suspend: %w", err)
	}
	status.Phase = v1alpha1.SuspendPhase
	return errStop
}

// dependentsRunning names the first enabled component registered after
// this one whose StatefulSet still exists, "" when none does.
func (m *Manager[O]) dependentsRunning(tc O) string {
	for _, p := range m.peers.After(m.comp.Name()) {
		c, ok := p.(Component[O])
		if !ok || !c.Enabled(tc) {
			continue
		}
		if _, err := m.sts.StatefulSets(tc.GetNamespace()).Get(names.Member(tc.GetName(), c.Name())); !apierrors.IsNotFound(err) {
			return c.Name()
		}
	}
	return ""
}

// componentConfigStrategy is the defaulted configUpdateStrategy of the
// named component of tc.
func componentConfigStrategy(tc *v1alpha1.TidbCluster, name string) v1alpha1.ConfigUpdateStrategy {
	return defaulting.NewComponentAccessor(tc, defaulting.Component(name)).ConfigUpdateStrategy()
}
