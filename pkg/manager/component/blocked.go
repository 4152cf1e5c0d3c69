package component

import (
	"fmt"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// BlockedBy returns why a component must not restart pods while one of the
// named components it depends on is scaling or upgrading, or "".
func BlockedBy(tc *v1alpha1.TidbCluster, deps ...string) string {
	for _, d := range deps {
		var phase v1alpha1.MemberPhase
		switch d {
		case "pd":
			if tc.Spec.PD == nil {
				continue
			}
			phase = tc.Status.PD.Phase
		case "tikv":
			if tc.Spec.TiKV == nil {
				continue
			}
			phase = tc.Status.TiKV.Phase
		case "tiflash":
			if tc.Spec.TiFlash == nil {
				continue
			}
			phase = tc.Status.TiFlash.Phase
		}
		if phase == v1alpha1.UpgradePhase || phase == v1alpha1.ScalePhase {
			return fmt.Sprintf("%s is in phase %s", d, phase)
		}
	}
	return ""
}
