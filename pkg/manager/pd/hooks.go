package pd

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/flow"
	"github.com/kubetidb/tidb-operator/pkg/label"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/names"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Hooks are PD's lifecycle hooks: never restart or remove the PD leader
// without first handing leadership to another healthy member, and delete a
// member from PD before its pod goes.
type Hooks struct {
	failover component.FailoverConfig
	pd       pdapi.Control
	kube     kubernetes.Interface
	recorder record.EventRecorder
	clock    clock.PassiveClock
}

// NewHooks returns PD's hooks, talking to PD through ctl.
func NewHooks(cfg component.FailoverConfig, ctl pdapi.Control, kube kubernetes.Interface,
	recorder record.EventRecorder, clk clock.PassiveClock) *Hooks {
	return &Hooks{failover: cfg, pd: ctl, kube: kube, recorder: recorder, clock: clk}
}

var _ component.Hooks = (*Hooks)(nil)

// PreScaleIn transfers leadership away from the member being removed (to
// the lowest remaining ordinal), then deletes it from PD. It waits while PD
// cannot be reached, and refuses to remove the last PD of a cluster whose
// other components still need it.
func (h *Hooks) PreScaleIn(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if !tc.Status.PD.Synced {
		return flow.Requeue("PD must answer before a member is removed")
	}
	if ordinal == 0 && (tc.Spec.TiKV != nil || tc.Spec.TiDB != nil || tc.Spec.TiFlash != nil) {
		return flow.Ignore(fmt.Errorf("refusing to remove the last PD while other components exist"))
	}
	member := names.Pod(tc.Name, names.PD, ordinal)
	if tc.Status.PD.Leader.Name == member {
		if err := h.transferLeader(ctx, tc, member, ordinal, false); err != nil {
			return err
		}
	}
	if err := h.client(tc).DeleteMember(ctx, member); err != nil {
		return fmt.Errorf("delete PD member %s: %w", member, err)
	}
	return nil
}

// PreUpgradePod hands leadership away when the pod to restart leads,
// preferring a member already restarted (a higher ordinal).
func (h *Hooks) PreUpgradePod(ctx context.Context, tc *v1alpha1.TidbCluster, ordinal int32) error {
	if !tc.Status.PD.Synced {
		return flow.Requeue("PD must answer before a member restarts")
	}
	member := names.Pod(tc.Name, names.PD, ordinal)
	if tc.Status.PD.Leader.Name != member {
		return nil
	}
	return h.transferLeader(ctx, tc, member, ordinal, true)
}

// transferLeader asks PD to move leadership from member to the best healthy
// other member and waits for the move; with no healthy candidate it lets
// the action proceed (PD elects a leader itself).
func (h *Hooks) transferLeader(ctx context.Context, tc *v1alpha1.TidbCluster, member string, ordinal int32, preferHigher bool) error {
	target := pickLeader(tc, member, ordinal, preferHigher)
	if target == "" {
		return nil
	}
	if err := h.client(tc).TransferPDLeader(ctx, target); err != nil {
		return fmt.Errorf("transfer PD leader from %s to %s: %w", member, target, err)
	}
	return flow.Requeue("transferring PD leadership from %s to %s", member, target)
}

// pickLeader chooses a healthy member other than member: with preferHigher
// the lowest ordinal above (already upgraded), else the lowest ordinal.
func pickLeader(tc *v1alpha1.TidbCluster, member string, ordinal int32, preferHigher bool) string {
	type cand struct {
		name string
		ord  int32
	}
	var cands []cand
	for name, m := range tc.Status.PD.Members {
		if name == member || !m.Health {
			continue
		}
		if o, err := names.Ordinal(name); err == nil {
			cands = append(cands, cand{name, o})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].ord < cands[j].ord })
	if preferHigher {
		for _, c := range cands {
			if c.ord > ordinal {
				return c.name
			}
		}
	}
	if len(cands) > 0 {
		return cands[0].name
	}
	return ""
}

// PostUpgradePod has nothing to undo.
func (h *Hooks) PostUpgradePod(context.Context, *v1alpha1.TidbCluster, int32) error { return nil }

// EndUpgrade returns nil: a leader transfer leaves nothing behind.
func (h *Hooks) EndUpgrade(context.Context, *v1alpha1.TidbCluster) error { return nil }

// PodHealthy reports the member's health in PD.
func (h *Hooks) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	return tc.Status.PD.Members[podName].Health
}

// UpgradeBlocker returns "": PD comes first and waits for nothing.
func (h *Hooks) UpgradeBlocker(*v1alpha1.TidbCluster) string { return "" }

// ForceUpgrade restarts every PD pod at once when PD cannot answer and
// either the cluster asks for it (tidb.pingcap.com/force-upgrade: "true") or
// it has a single member: a PD that cannot start on its configuration
// would otherwise block its own fix.
func (h *Hooks) ForceUpgrade(tc *v1alpha1.TidbCluster) bool {
	if tc.Status.PD.Synced {
		return false
	}
	return tc.Annotations[label.AnnForceUpgradeKey] == "true" || tc.Spec.PD.Replicas < 2
}

// ScaleOutStep is 1: PD members join one at a time.
func (h *Hooks) ScaleOutStep(*v1alpha1.TidbCluster) int32 { return 1 }

func (h *Hooks) client(tc *v1alpha1.TidbCluster) pdapi.Client {
	return h.pd.GetPDClient(tc.Namespace, tc.Name, ClientOptions(tc))
}
