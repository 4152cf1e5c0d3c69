package simulator

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// settings are the simulator-wide knobs every cluster reads; guarded by the Registry lock.
type settings struct {
	opts    Options
	timings Timings
}

// Cluster is the simulated state of one TiDB cluster: PD members, TiKV and TiFlash stores, regions and
// leaders, schedulers, configuration, TiFlash replica rules, TiCDC captures and tables, TiProxy health, the
// Pump registry and injected faults. Every method expects the Registry lock to be held.
type Cluster struct {
	key    ClusterKey
	id     uint64
	set    *settings
	log    klog.Logger
	domain string
	// tcDomain is spec.clusterDomain of the TidbCluster; it wins over the simulator's default domain.
	tcDomain string
	hasTC    bool
	// tls is what TLS the cluster speaks (spec.tlsCluster.enabled) and what it was asked over it (tls.go).
	tls  clusterTLS
	pods map[string]PodObservation
	// podOwners is the heterogeneous cluster of every pod observed from one (heterogeneous.go).
	podOwners   map[string]ClusterKey
	lastAdvance time.Time

	members        map[string]*pdMember
	removedMembers map[identity]bool
	leader         string
	leaderHistory  leaderHistory

	stores       map[uint64]*store
	nextStoreID  uint64
	bootstrapped bool
	bootstrapAt  time.Time
	regionCount  int
	// unassigned counts the leaders no store holds (no eligible store was available).
	unassigned  int
	replication pdapi.ReplicationConfig
	// replicationPersisted: PD holds replication settings of its own (the first member joined with the
	// TidbCluster's config seen, or they were written), so spec.pd.config no longer applies.
	replicationPersisted bool
	schedulers           map[string]bool
	evicting             map[uint64]bool
	// tiflashReplicas is the TiFlash replica count per table ID: the rules "table-<id>-r" of placement
	// group "tiflash" that TiDB writes for `ALTER TABLE … SET TIFLASH REPLICA n`, set through the admin API.
	tiflashReplicas map[int64]*tiflashReplica

	// captures are the registered TiCDC captures by pod name (see ticdc_captures.go); cdcOwner is the
	// owner's pod, cdcDrainTarget the pod being drained, which held cdcDrainFrom tables when it began.
	captures       map[string]*capture
	nextCaptureSeq uint64
	cdcOwner       string
	cdcDrainTarget string
	cdcDrainFrom   int
	// cdcDrainElapsed is how long the current drain has run: the tables due off the target are
	// cdcDrainFrom × elapsed / TiCDCDrainTime, so that a drain of few tables still takes the period.
	cdcDrainElapsed  time.Duration
	ticdcTables      int
	ticdcUnassigned  int
	cdcUnhealthy     map[string]bool
	tiproxyUnhealthy map[string]bool
	// pdmsPrimary is the member a primary transfer chose, by micro-service (pdms.go).
	pdmsPrimary map[Component]string
	// tidbUnhealthy marks TiDB pods whose /status answers 500 (set through the admin API).
	tidbUnhealthy map[string]bool
	// pumpNodes is the Pump registry by node ID (see pump_nodes.go).
	pumpNodes map[string]*pumpNode
	// tidbLabels are the TiDB servers' labels by pod name (see tidb_labels.go).
	tidbLabels map[string]*tidbServerLabels
	// tidbLabelWrites counts the accepted POST /labels per TiDB pod name.
	tidbLabelWrites map[string]int
	// tidbUpgrade is TiDB's smooth-upgrade state and the switch requests (tidb_upgrade.go).
	tidbUpgrade tidbUpgrade

	faults        []*fault
	nextFaultID   int
	pdUnreachable bool
	// ownTimings are this cluster's timings when set through the admin API (`PUT …/timings`), so tests
	// sharing one simulator can slow down their own cluster only; nil follows the simulator-wide ones.
	ownTimings *Timings
}

// timings returns the durations this cluster's state machine runs on: its own when set, else the
// simulator-wide ones.
func (c *Cluster) timings() Timings {
	if c.ownTimings != nil {
		return *c.ownTimings
	}
	return c.set.timings
}

// defaultSchedulers are the schedulers a fresh PD v8.5 runs (listed once the cluster is bootstrapped,
// when its coordinator runs).
var defaultSchedulers = []string{
	"balance-hot-region-scheduler", "balance-leader-scheduler", "balance-region-scheduler",
	"evict-slow-store-scheduler", "evict-stopping-store-scheduler",
}

func newCluster(key ClusterKey, set *settings, log klog.Logger, now time.Time) *Cluster {
	c := &Cluster{
		key:            key,
		id:             stableID("cluster", key.Namespace, key.Name) >> 1, // PD cluster IDs fit in int64
		set:            set,
		log:            log.WithValues("cluster", key.String()),
		domain:         set.opts.ClusterDomain,
		pods:           map[string]PodObservation{},
		podOwners:      map[string]ClusterKey{},
		lastAdvance:    now,
		members:        map[string]*pdMember{},
		removedMembers: map[identity]bool{},
		stores:         map[uint64]*store{},
		nextStoreID:    1,
		regionCount:    set.opts.RegionCount,
		unassigned:     set.opts.RegionCount,
		// Placement rules start enabled because PD ≥ 5.0 enables them by default and the simulated
		// components are v8 (DefaultVersion v8.5.0); TiFlash stores register only while they are enabled.
		replication: pdapi.ReplicationConfig{
			MaxReplicas: set.opts.MaxReplicas, LocationLabels: pdapi.StringSlice{}, EnablePlacementRules: true,
		},
		schedulers:       map[string]bool{},
		evicting:         map[uint64]bool{},
		tiflashReplicas:  map[int64]*tiflashReplica{},
		captures:         map[string]*capture{},
		ticdcTables:      set.opts.TiCDCTables,
		ticdcUnassigned:  set.opts.TiCDCTables,
		cdcUnhealthy:     map[string]bool{},
		tiproxyUnhealthy: map[string]bool{},
		pdmsPrimary:      map[Component]string{},
		tidbUnhealthy:    map[string]bool{},
		pumpNodes:        map[string]*pumpNode{},
	}
	for _, name := range defaultSchedulers {
		c.schedulers[name] = true
	}
	return c
}

// observe replaces the observed pods (and TidbCluster facts) and settles the state at now.
func (c *Cluster) observe(obs ClusterObservation, now time.Time) {
	c.advance(now)
	c.pods = make(map[string]PodObservation, len(obs.Pods))
	for _, p := range obs.Pods {
		c.pods[p.Name] = p
	}
	c.rememberOwners(obs.Pods)
	c.hasTC = obs.TidbCluster != nil
	c.tcDomain = ""
	c.tls.enabled = false
	if obs.TidbCluster != nil {
		c.tcDomain = obs.TidbCluster.ClusterDomain
		c.tls.enabled = obs.TidbCluster.TLSCluster
		c.adoptStartConfig(obs.TidbCluster)
	}
	c.advanceBy(now, 0)
}

// advance moves the state machine from the last advance to now; a clock going backwards counts as no time.
func (c *Cluster) advance(now time.Time) {
	dt := now.Sub(c.lastAdvance)
	if dt < 0 {
		dt = 0
	}
	c.advanceBy(now, dt)
}

// advanceBy runs one step of dt ending at now. The order matters: heartbeats first (so a store that was live
// until now counts as live for the step), then PD leadership (stores and TiCDC captures register only with
// a PD leader, Pumps register with PD reachable), then data and table movement and Pump heartbeats and
// closing, then the transition log.
func (c *Cluster) advanceBy(now time.Time, dt time.Duration) {
	c.lastAdvance = now
	for _, s := range c.stores {
		if c.storeLive(s) {
			s.lastHeartbeat = now
		}
	}
	c.electLeader()
	c.syncMembers()
	c.registerStores(now)
	c.trackPDReadiness(now)
	c.syncCaptures()
	c.syncPumps(now)
	c.progressOffline(dt)
	c.moveLeaders(dt)
	c.moveTables(dt)
	c.progressPumps(now, dt)
	c.logTransitions(now)
}

// logTransitions logs every change of a member's health or a store's reported state once.
func (c *Cluster) logTransitions(now time.Time) {
	for _, m := range c.members {
		if healthy := c.memberHealthy(m); healthy != m.loggedHealthy {
			m.loggedHealthy = healthy
			c.log.V(2).Info("PD member health changed", "member", m.name, "healthy", healthy)
		}
	}
	for _, s := range c.stores {
		if name := c.stateName(s, now); name != s.loggedState {
			c.log.V(2).Info("store state changed", "store", s.id, "pod", s.ident.pod, "from", s.loggedState, "to", name)
			s.loggedState = name
		}
	}
}

// podsOf returns the observed pods of component sorted by name, for deterministic iteration.
func (c *Cluster) podsOf(comp Component) []PodObservation {
	var out []PodObservation
	for _, p := range c.pods {
		if p.Component == comp {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// podWithIdentity returns the observed pod that carries id (same name and PVC UID).
func (c *Cluster) podWithIdentity(id identity) (PodObservation, bool) {
	p, ok := c.pods[id.pod]
	if !ok || p.PVCPending || p.PVCUID != id.pvcUID {
		return PodObservation{}, false
	}
	return p, true
}

// hostSuffix is ".svc" plus the cluster domain, the tail of every advertised address.
func (c *Cluster) hostSuffix() string {
	domain := c.domain
	if c.tcDomain != "" {
		domain = c.tcDomain
	}
	if domain == "" {
		return ".svc"
	}
	return ".svc." + domain
}

// podHost is the DNS name a pod of comp advertises: <pod>.<tc>-<comp>-peer.<ns>.svc[.<domain>], with the
// names of the heterogeneous cluster the pod comes from, if any.
func (c *Cluster) podHost(pod string, comp Component) string {
	key := c.ownerOf(pod)
	return fmt.Sprintf("%s.%s-%s-peer.%s%s", pod, key.Name, comp, key.Namespace, c.hostSuffix())
}

// version returns the observed version of p, or the default.
func (c *Cluster) version(p PodObservation) string {
	if p.Version != "" {
		return p.Version
	}
	return c.set.opts.DefaultVersion
}

// pdAvailable reports whether PD answers API calls: a leader exists (hence a quorum).
func (c *Cluster) pdAvailable() bool { return c.leader != "" }
