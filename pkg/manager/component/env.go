package component

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/manager/apply"
	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// Member is one step of a TidbCluster sync as the controller runs it
// (reclaim policy, discovery, a StatefulSet component, the PVC cleaner).
// Sync may change tc.Status and nothing else of tc; a wait is a
// flow.RequeueError.
type Member interface {
	// Name labels metrics and logs, e.g. "pd".
	Name() string
	// Sync reconciles the member's objects for the defaulted, valid tc.
	Sync(ctx context.Context, tc *v1alpha1.TidbCluster) error
}

// Env is what members are built from: the write layer, the caches they
// read, the PD control and HTTP transports, and the command line's
// failover settings. It holds no controller machinery, so component
// packages never import the controller shell. Fields a member does not use
// may be nil (render builds members from an empty Env).
type Env struct {
	// Writer does every API write, with an event each.
	Writer *apply.Applier
	// Kube reads what the caches do not hold (Events, Secrets, the data of
	// the operator's own ConfigMaps when their hash differs); never writes.
	Kube         kubernetes.Interface
	StatefulSets appslisters.StatefulSetLister
	Pods         corelisters.PodLister
	ConfigMaps   corelisters.ConfigMapLister
	PVCs         corelisters.PersistentVolumeClaimLister
	PVs          corelisters.PersistentVolumeLister
	// PD reaches each cluster's PD; HTTP holds the TLS-aware transports
	// other component clients (TiDB, TiFlash) are built on.
	PD       pdapi.Control
	HTTP     *pdapi.HTTPClientCache
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
	// AutoFailover is --auto-failover; FailoverPeriods the grace period of
	// each component (--<component>-failover-period), 5m when absent.
	AutoFailover    bool
	FailoverPeriods map[string]time.Duration
	// NodeFailure is --detect-node-failure and what goes with it (§8.4).
	NodeFailure NodeFailureConfig
	// DiscoveryImage is --tidb-discovery-image.
	DiscoveryImage string
	// VolumeModifying is the feature gate of that name: PVCs follow a
	// changed volumeAttributesClassName (volumeattrs.go).
	VolumeModifying bool
	// Peers knows every registered Component by name (upgrade blockers).
	Peers *Peers
	// NodesDenied: the operator may not get Nodes (namespaced, without
	// --cluster-permission-node), so nothing reads them (NodeClient).
	NodesDenied bool
	// StorageClassesDenied: the operator may not get StorageClasses
	// (namespaced, without --cluster-permission-sc), so no PVC is grown.
	StorageClassesDenied bool
}

// NodeClient is the client that reads Nodes: Kube, or nil when
// NodesDenied (a nil client reads no node).
func (e *Env) NodeClient() kubernetes.Interface {
	if e.NodesDenied {
		return nil
	}
	return e.Kube
}

// Failover returns the failover settings of the named component.
func (e *Env) Failover(name string) FailoverConfig {
	period, ok := e.FailoverPeriods[name]
	if !ok {
		period = 5 * time.Minute
	}
	return FailoverConfig{Enabled: e.AutoFailover, Period: period}
}

// Peer is a registered component as Peers holds it: a Component of any
// owner kind. The skeleton asks a peer of its own owner kind for more.
type Peer interface {
	// Name is the component's name.
	Name() string
}

// Peers finds registered components by name. The zero value is empty and
// ready; it is filled while members are built, before any sync.
type Peers struct {
	byName map[string]Peer
	order  []Peer // registration (sync) order
}

// Add registers c under its name.
func (p *Peers) Add(c Peer) {
	if p.byName == nil {
		p.byName = map[string]Peer{}
	}
	if _, ok := p.byName[c.Name()]; !ok {
		p.order = append(p.order, c)
	}
	p.byName[c.Name()] = c
}

// After returns the components registered after name, in sync order: the
// ones that depend on it.
func (p *Peers) After(name string) []Peer {
	if p == nil {
		return nil
	}
	for i, c := range p.order {
		if c.Name() == name {
			return p.order[i+1:]
		}
	}
	return nil
}

// Get returns the component registered as name.
func (p *Peers) Get(name string) (Peer, bool) {
	if p == nil {
		return nil, false
	}
	c, ok := p.byName[name]
	return c, ok
}
