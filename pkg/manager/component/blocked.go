package component

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// upgradeBlocker returns why the component must not restart pods now: a
// component its Traits name (UpgradeBlockers) is present and scaling, upgrading
// or replacing a member's volumes (until the replaced pod is back).
// It returns "" when the component names none or none is busy.
func (m *Manager[O]) upgradeBlocker(tc O) string {
	for _, name := range m.comp.Traits().UpgradeBlockers {
		p, _ := m.peers.Get(name)
		peer, ok := p.(Component[O])
		if !ok || !peer.Enabled(tc) {
			continue
		}
		status := peer.Status(tc)
		if phase := status.Phase; phase == v1alpha1.UpgradePhase || phase == v1alpha1.ScalePhase {
			return fmt.Sprintf("%s is in phase %s", name, phase)
		}
		if status.VolReplaceInProgress {
			return fmt.Sprintf("%s is replacing a member's volumes", name)
		}
	}
	return ""
}
