package component

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// stubComponent is a component named name whose status is status.pd (pd)
// or status.tidb (any other name), and that names blockers.
type stubComponent struct {
	name     string
	blockers []string
}

func (s stubComponent) Name() string                                     { return s.name }
func (s stubComponent) Enabled(*v1alpha1.TidbCluster) bool               { return true }
func (s stubComponent) Replicas(*v1alpha1.TidbCluster) int32             { return 1 }
func (s stubComponent) Services(*v1alpha1.TidbCluster) []*corev1.Service { return nil }
func (s stubComponent) Traits() Traits                                   { return Traits{UpgradeBlockers: s.blockers} }
func (s stubComponent) ConfigData(*v1alpha1.TidbCluster) (map[string]string, error) {
	return nil, nil
}
func (s stubComponent) StatefulSet(*v1alpha1.TidbCluster, string) (*appsv1.StatefulSet, error) {
	return nil, nil
}
func (s stubComponent) Status(tc *v1alpha1.TidbCluster) *v1alpha1.ComponentStatus {
	if s.name == "pd" {
		return &tc.Status.PD.ComponentStatus
	}
	return &tc.Status.TiDB.ComponentStatus
}

// TestUpgradeBlockedWhileABlockerReplacesVolumes: a component whose
// blocker is replacing a member's volumes (until the replaced pod is back)
// does not restart pods, even while the blocker's phase is Normal.
func TestUpgradeBlockedWhileABlockerReplacesVolumes(t *testing.T) {
	t.Parallel()
	peers := &Peers{}
	peers.Add(stubComponent{name: "pd"})
	m := &Manager[*v1alpha1.TidbCluster]{comp: stubComponent{name: "tidb", blockers: []string{"pd"}}, peers: peers}
	tc := &v1alpha1.TidbCluster{}
	tc.Status.PD.Phase = v1alpha1.NormalPhase
	if why := m.upgradeBlocker(tc); why != "" {
		t.Fatalf("blocked by %q with PD settled", why)
	}
	tc.Status.PD.VolReplaceInProgress = true
	if why := m.upgradeBlocker(tc); !strings.Contains(why, "pd is replacing") {
		t.Fatalf("upgradeBlocker = %q, want PD's volume replacement named", why)
	}
}
