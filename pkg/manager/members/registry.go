// Package members is the one ordered registry of what a TidbCluster sync
// runs. The controller, render, the conditions, the Unsupported list and
// the metrics all read it; adding a component is its package plus one line
// here.
package members

import (
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/discovery"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/manager/pdms"
	"github.com/kubetidb/tidb-operator/pkg/manager/pump"
	"github.com/kubetidb/tidb-operator/pkg/manager/reclaim"
	"github.com/kubetidb/tidb-operator/pkg/manager/ticdc"
	"github.com/kubetidb/tidb-operator/pkg/manager/tidb"
	"github.com/kubetidb/tidb-operator/pkg/manager/tidbinit"
	"github.com/kubetidb/tidb-operator/pkg/manager/tiflash"
	"github.com/kubetidb/tidb-operator/pkg/manager/tikv"
	"github.com/kubetidb/tidb-operator/pkg/manager/tiproxy"
)

// stateful wraps a component's constructor in the skeleton.
func stateful[C component.Component[*v1alpha1.TidbCluster]](newComponent func(*component.Env) C) func(*component.Env) component.Member {
	return func(env *component.Env) component.Member { return component.NewManager(newComponent(env), env) }
}

func plain[M component.Member](newMember func(*component.Env) M) func(*component.Env) component.Member {
	return func(env *component.Env) component.Member { return newMember(env) }
}

// registry is the sync order, the TiDB Operator's (spec §3.1): PV reclaim
// policies, discovery, PD's micro-services (tso, scheduling), PD, TiProxy, then the components in dependency order (each
// waits on the ones before it), and last the cleaner of scaled-in members'
// PVCs. The first member that waits or fails ends a sync.
var registry = []func(*component.Env) component.Member{
	plain(reclaim.NewPolicy),
	plain(discovery.New),
	stateful(pdms.NewTSO),
	stateful(pdms.NewScheduling),
	stateful(pd.New),
	plain(pdms.NewRetirer), // scales retired micro-services to 0 once PD no longer needs them
	stateful(tiproxy.New),
	stateful(tiflash.New),
	stateful(tikv.New),
	stateful(pump.New),
	stateful(tidb.New),
	plain(tidbinit.New), // root's random password, once a TiDB is healthy; never holds up the rest
	stateful(ticdc.New),
	plain(reclaim.NewCleaner),
}

// New builds every registered member over env, in sync order.
func New(env *component.Env) []component.Member {
	if env.Peers == nil {
		env.Peers = &component.Peers{}
	}
	out := make([]component.Member, 0, len(registry))
	for _, build := range registry {
		out = append(out, build(env))
	}
	return out
}

// Components returns the StatefulSet components among members, in order.
func Components(members []component.Member) []component.Component[*v1alpha1.TidbCluster] {
	var out []component.Component[*v1alpha1.TidbCluster]
	for _, m := range members {
		if s, ok := m.(interface {
			Component() component.Component[*v1alpha1.TidbCluster]
		}); ok {
			out = append(out, s.Component())
		}
	}
	return out
}
