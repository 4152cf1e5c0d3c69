// Package store is the lifecycle TiKV and TiFlash share, parameterised by
// component: their status from PD's stores (one GetStores per sync, split
// by the engine label), scale-in through delete-store → Tombstone,
// failover records, health and readiness. A store's data is never
// abandoned: a pod is released only once PD reports its store Tombstone.
package store

import (
	"fmt"

	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/component"
	"github.com/kubetidb/tidb-operator/pkg/manager/pd"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Kind says which stores a Lifecycle manages.
type Kind struct {
	// Component is the component's name, "tikv" or "tiflash".
	Component string
	// TiFlash selects the stores labelled engine=tiflash; otherwise the
	// stores without that label.
	TiFlash bool
	// Status returns the component's store status inside tc.
	Status func(tc *v1alpha1.TidbCluster) *v1alpha1.TiKVStatus
	// Spec returns the component's replicas, maxFailoverCount, and whether
	// the user asked to recover from failover (recoverFailover, or
	// failover.recoverByUID naming the current round).
	Spec func(tc *v1alpha1.TidbCluster) Spec
	// NotUpReason is the Ready condition's reason while stores are not Up
	// (TiKVStoreNotUp, TiFlashStoreNotUp); Label names them in messages.
	NotUpReason, Label string
}

// Spec is what a Lifecycle reads of the component's spec.
type Spec struct {
	Replicas         int32
	MaxFailoverCount *int32
	RecoverFailover  bool
	RecoverByUID     string
}

// Lifecycle is the store lifecycle of one Kind. Embedded in a component,
// it supplies Observe, PreScaleIn, PodHealthy, Failover, FailoverReplicas
// and NotReady.
type Lifecycle struct {
	kind     Kind
	pd       pdapi.Control
	pods     corelisters.PodLister
	recorder record.EventRecorder
	clock    clock.PassiveClock
	failover component.FailoverConfig
	nodes    *Nodes
	meta     *pd.Meta
	hosts    *component.NodeFailure
}

// New returns the lifecycle of kind's stores over env.
func New(kind Kind, env *component.Env) *Lifecycle {
	return &Lifecycle{kind: kind, pd: env.PD, pods: env.Pods, recorder: env.Recorder, clock: env.Clock,
		failover: env.Failover(kind.Component), nodes: NewNodes(env.NodeClient(), env.Recorder), meta: pd.NewMeta(env),
		hosts: component.NewNodeFailure(env)}
}

// Client returns the client of the PD tc's stores register with.
func (l *Lifecycle) Client(tc *v1alpha1.TidbCluster) pdapi.Client { return pd.ClientFor(l.pd, tc) }

// Of returns this cluster's live store of a pod.
func (l *Lifecycle) Of(tc *v1alpha1.TidbCluster, pod string) (v1alpha1.TiKVStore, bool) {
	for _, s := range l.kind.Status(tc).Stores {
		if s.PodName == pod {
			return s, true
		}
	}
	return v1alpha1.TiKVStore{}, false
}

func (l *Lifecycle) tombstoned(tc *v1alpha1.TidbCluster, pod string) bool {
	for _, s := range l.kind.Status(tc).TombstoneStores {
		if s.PodName == pod {
			return true
		}
	}
	return false
}

// PodHealthy reports whether the pod's store is Up.
func (l *Lifecycle) PodHealthy(tc *v1alpha1.TidbCluster, podName string) bool {
	s, ok := l.Of(tc, podName)
	return ok && s.State == pdapi.StoreStateNameUp
}

// UpStores counts the Up stores of this cluster and of peer clusters.
func (l *Lifecycle) UpStores(tc *v1alpha1.TidbCluster) int {
	return UpStores(l.kind.Status(tc))
}

// UpStores counts the Up stores of s and of its peer clusters.
func UpStores(s *v1alpha1.TiKVStatus) int {
	n := 0
	for _, stores := range []map[string]v1alpha1.TiKVStore{s.Stores, s.PeerStores} {
		for _, st := range stores {
			if st.State == pdapi.StoreStateNameUp {
				n++
			}
		}
	}
	return n
}

// NotReady reports the kind's NotUpReason while fewer of this cluster's
// stores are Up than desired.
func (l *Lifecycle) NotReady(tc *v1alpha1.TidbCluster) (reason, message string) {
	up := 0
	for _, s := range l.kind.Status(tc).Stores {
		if s.State == pdapi.StoreStateNameUp {
			up++
		}
	}
	if want := l.kind.Spec(tc).Replicas; up < int(want) {
		return l.kind.NotUpReason, fmt.Sprintf("%s store(s) are not up: %d of %d", l.kind.Label, up, want)
	}
	return "", ""
}
