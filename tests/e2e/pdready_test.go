//go:build integration

package e2e

import (
	"sort"
	"testing"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// TestPDRestartsTheNextMemberOnlyOnceTheLastAnswersReady upgrades PD alone
// (spec.pd.version) while each restarted PD member takes 15 s to answer
// `/pd/api/v2/ready` (a PD v8.5 loading its regions): the next member's
// pod may start only after the one restarted before it answered ready,
// which its health in PD alone (seconds after the start) does not show.
func TestPDRestartsTheNextMemberOnlyOnceTheLastAnswersReady(t *testing.T) {
	t.Parallel()
	operator.InstallCRDs(t)
	env := framework.NewEnv(t)
	sim := startSimulator(t, env)
	operator.StartManager(t, env.Namespace, nil)
	pc := deployBasic(t, env)
	delay := api.Duration(15 * time.Second)
	if _, err := sim.SetClusterTimings(env.Ctx, env.Namespace, "basic", api.TimingsUpdate{PDReadyDelay: &delay}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	patchSpec(t, env, pc, map[string]any{"pd": map[string]any{"version": "v8.5.1"}})
	waitReady(t, env, pc, "every PD pod runs v8.5.1", func(tc *v1alpha1.TidbCluster) bool {
		return imagesAre(env, "pd", "v8.5.1")(tc) && tc.Status.PD.Phase == v1alpha1.NormalPhase
	})
	var members []api.Member
	waitSim(t, env, sim, "every restarted PD member answers ready", func(st *simState) bool {
		members = st.Members
		for _, m := range st.Members {
			if m.StartedAt == nil || m.ReadySince == nil {
				return false
			}
		}
		return len(st.Members) == 3
	})
	sort.Slice(members, func(i, j int) bool { return members[i].StartedAt.Before(*members[j].StartedAt) })
	for i, m := range members {
		if m.StartedAt.Before(start) {
			t.Fatalf("PD member %s was not restarted by the upgrade (started %v)", m.Name, m.StartedAt)
		}
		if i == 0 {
			continue
		}
		prev := members[i-1]
		if !m.StartedAt.After(*prev.ReadySince) {
			t.Errorf("PD member %s started at %v, before %s (restarted before it) answered ready at %v",
				m.Name, m.StartedAt.Format(time.RFC3339Nano), prev.Name, prev.ReadySince.Format(time.RFC3339Nano))
		}
	}
}
