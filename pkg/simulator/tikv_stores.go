package simulator

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"sort"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/pdapi"
)

// store is a simulated TiKV or TiFlash store: a pod identity that registered with PD.
type store struct {
	id    uint64
	ident identity
	// comp is ComponentTiKV or ComponentTiFlash. TiFlash stores carry the label engine=tiflash, hold
	// learner replicas only (never a leader) and are not counted where TiKV stores are meant.
	comp    Component
	version string
	// state is the persisted PD state (Up, Offline, Tombstone); Disconnected and Down are derived.
	state               pdapi.StoreState
	forcedDown          bool
	physicallyDestroyed bool
	startTime           time.Time
	lastHeartbeat       time.Time
	labels              map[string]string
	labelWrites         int // store-label requests accepted, for the admin state
	leaders             int
	// lostLeaders is how many leaders the store held the last time it stopped heartbeating holding
	// some (its pod gone or not Ready): what a restart without a leader eviction costs.
	lostLeaders int
	// drainFrom is the leader count when the current drain (eviction or going Offline) began.
	drainFrom int
	// regionsAtOffline and migrated track the migration of an Offline store's regions.
	regionsAtOffline int
	migrated         time.Duration
	loggedState      string
}

// registerStores gives every running TiKV pod with a known PVC a store, as TiKV registers with PD on start,
// and then every running TiFlash pod once TiFlash may register (tiflashCanRegister): it needs a PD leader;
// a known identity keeps its store (whatever its state); a new identity gets a new ID unless a store that
// is not Tombstone (nor physically destroyed) already uses the same address, which PD refuses as a
// duplicated address. The first TiKV store bootstraps the cluster.
func (c *Cluster) registerStores(now time.Time) {
	if !c.pdAvailable() {
		return
	}
	for _, p := range c.podsOf(ComponentTiKV) {
		if s := c.registerStore(p, now); s != nil && !c.bootstrapped {
			c.bootstrapped, c.bootstrapAt = true, now
		}
	}
	if !c.tiflashCanRegister() {
		return
	}
	for _, p := range c.podsOf(ComponentTiFlash) {
		c.registerStore(p, now)
	}
}

// registerStore registers the store of pod p (TiKV or TiFlash) and returns it; nil when p does not run,
// waits for its PVC, already has its store, or its address is still in use.
func (c *Cluster) registerStore(p PodObservation, now time.Time) *store {
	if !p.Running || p.PVCPending {
		return nil
	}
	id := identity{pod: p.Name, pvcUID: p.PVCUID}
	if s := c.storeByIdentity(id); s != nil {
		s.version = c.version(p)
		return nil
	}
	if c.addressInUse(p.Name) {
		return nil
	}
	s := &store{
		id: c.nextStoreID, ident: id, comp: p.Component, version: c.version(p), startTime: now, lastHeartbeat: now,
		labels: map[string]string{},
	}
	if s.comp == ComponentTiFlash {
		s.labels[pdapi.StoreLabelEngine] = pdapi.EngineTiFlash
	}
	c.nextStoreID++
	c.stores[s.id] = s
	c.log.Info("store registered", "store", s.id, "engine", s.comp, "pod", p.Name, "address", c.storeAddress(s))
	return s
}

func (c *Cluster) storeByIdentity(id identity) *store {
	for _, s := range c.stores {
		if s.ident == id {
			return s
		}
	}
	return nil
}

// addressInUse reports whether a store of pod (hence with its address) blocks a new registration.
func (c *Cluster) addressInUse(pod string) bool {
	for _, s := range c.stores {
		if s.ident.pod == pod && s.state != pdapi.StoreStateTombstone && !s.physicallyDestroyed {
			return true
		}
	}
	return false
}

// storeAddress is the address the store advertises: <pod>.<tc>-tikv-peer.<ns>.svc[.<domain>]:20160 for
// TiKV; for TiFlash its engine address <pod>.<tc>-tiflash-peer.<ns>.svc[.<domain>]:3930 (TiFlash's
// `engine-addr`, as real PD lists TiFlash stores).
func (c *Cluster) storeAddress(s *store) string {
	if s.comp == ComponentTiFlash {
		return c.podHost(s.ident.pod, ComponentTiFlash) + ":3930"
	}
	return c.podHost(s.ident.pod, ComponentTiKV) + ":20160"
}

// storePeerAddress is the store's Raft address: the TiKV address, or the TiFlash proxy's (port 20170).
func (c *Cluster) storePeerAddress(s *store) string {
	if s.comp == ComponentTiFlash {
		return c.podHost(s.ident.pod, ComponentTiFlash) + ":20170"
	}
	return c.storeAddress(s)
}

// storeStatusAddress is the store's status address: TiKV's port 20180, the TiFlash proxy's 20292.
func (c *Cluster) storeStatusAddress(s *store) string {
	if s.comp == ComponentTiFlash {
		return c.podHost(s.ident.pod, ComponentTiFlash) + ":" + tiflashProxyStatusPort
	}
	return c.podHost(s.ident.pod, ComponentTiKV) + ":" + tikvStatusPort
}

// storeLive reports whether the store heartbeats: its pod (same identity) runs and is Ready, it is not
// Tombstone and no fault marks it Down.
func (c *Cluster) storeLive(s *store) bool {
	if s.forcedDown || s.state == pdapi.StoreStateTombstone {
		return false
	}
	p, ok := c.podWithIdentity(s.ident)
	return ok && p.Running && p.Ready
}

// stateName is the state PD reports at now: the persisted state, except that an Up store that misses
// heartbeats is Disconnected after StoreDisconnectTime and Down after MaxStoreDownTime (as PD's
// BuildStoreInfo); a store forced Down is Down at once.
func (c *Cluster) stateName(s *store, now time.Time) string {
	switch s.state {
	case pdapi.StoreStateOffline:
		return pdapi.StoreStateNameOffline
	case pdapi.StoreStateTombstone:
		return pdapi.StoreStateNameTombstone
	}
	if s.forcedDown {
		return pdapi.StoreStateNameDown
	}
	downTime := now.Sub(s.lastHeartbeat)
	switch {
	case downTime > c.timings().MaxStoreDownTime:
		return pdapi.StoreStateNameDown
	case !c.storeLive(s) && downTime >= c.timings().StoreDisconnectTime:
		return pdapi.StoreStateNameDisconnected
	}
	return pdapi.StoreStateNameUp
}

// sortedStores returns the stores by ID.
func (c *Cluster) sortedStores() []*store {
	out := make([]*store, 0, len(c.stores))
	for _, s := range c.stores {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// upStores counts the stores of comp (TiKV or TiFlash) whose persisted state is Up, however long ago they
// heartbeated.
func (c *Cluster) upStores(comp Component) int {
	n := 0
	for _, s := range c.stores {
		if s.comp == comp && s.state == pdapi.StoreStateUp {
			n++
		}
	}
	return n
}

// allUpStores counts every store whose persisted state is Up, TiFlash stores included: PD's `getUpStores`,
// which guards removing a store and does not tell engines apart.
func (c *Cluster) allUpStores() int {
	return c.upStores(ComponentTiKV) + c.upStores(ComponentTiFlash)
}

// liveUpStoresExcept counts heartbeating Up stores of comp other than id: the stores that can take an
// Offline store's replicas (TiKV replicas go to TiKV stores, TiFlash learners to TiFlash stores, because
// placement rules keep the engines apart).
func (c *Cluster) liveUpStoresExcept(id uint64, comp Component) int {
	n := 0
	for _, s := range c.stores {
		if s.id != id && s.comp == comp && s.state == pdapi.StoreStateUp && c.storeLive(s) {
			n++
		}
	}
	return n
}

func storeNotFound(id uint64) string {
	return fmt.Sprintf("[PD:core:ErrStoreNotFound]store %d not found", id)
}

func storeRemoved(id uint64) string {
	return fmt.Sprintf("[PD:core:ErrStoreRemoved]store %d has been removed", id)
}

// deleteStore starts taking a store offline as `DELETE /pd/api/v1/store/{id}[?force]`: 404 when unknown,
// 410 when already Tombstone, a no-op when already Offline, and, without force, 400 like PD when fewer than
// max-replicas Up stores would remain. Like PD's checkReplicaBeforeOfflineStore, that count includes
// TiFlash stores and nothing checks TiFlash replica rules: a TiFlash store is taken Offline even when fewer
// TiFlash stores than a table's TiFlash replicas would remain, and then stays Offline (progressOffline).
// force marks the store physically destroyed, which frees its address.
func (c *Cluster) deleteStore(id uint64, force bool) *pdError {
	s, ok := c.stores[id]
	switch {
	case !ok:
		return &pdError{http.StatusNotFound, storeNotFound(id)}
	case s.state == pdapi.StoreStateTombstone:
		return &pdError{http.StatusGone, storeRemoved(id)}
	}
	if force {
		s.physicallyDestroyed = true
	}
	if s.state == pdapi.StoreStateOffline {
		return nil
	}
	if remaining := c.allUpStores() - 1; !force && remaining < c.maxReplicas() {
		return &pdError{http.StatusBadRequest, fmt.Sprintf(
			"[PD:core:ErrStoresNotEnough]can not remove store %d since the number of up stores would be %d while need %d",
			id, remaining, c.maxReplicas())}
	}
	s.regionsAtOffline, s.migrated, s.drainFrom = c.regionsOf(s), 0, s.leaders
	s.state = pdapi.StoreStateOffline
	c.log.Info("store set Offline", "store", id, "engine", s.comp, "force", force)
	return nil
}

// setStoreState is `POST /pd/api/v1/store/{id}/state?state=Up|Offline`: Up cancels going offline.
func (c *Cluster) setStoreState(id uint64, state string) *pdError {
	switch state {
	case "Up", "up", "UP":
		s, ok := c.stores[id]
		switch {
		case !ok:
			return &pdError{http.StatusNotFound, storeNotFound(id)}
		case s.state == pdapi.StoreStateTombstone:
			return &pdError{http.StatusGone, storeRemoved(id)}
		case s.physicallyDestroyed:
			return &pdError{http.StatusBadRequest, fmt.Sprintf(
				"[PD:core:ErrStoreDestroyed]store %d has been physically destroyed", id)}
		}
		s.state = pdapi.StoreStateUp
		return nil
	case "Offline", "offline", "OFFLINE":
		return c.deleteStore(id, false)
	}
	return &pdError{http.StatusBadRequest, "invalid state " + state}
}

var (
	labelKeyPattern   = regexp.MustCompile(`^[$]?[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$`)
	labelValuePattern = regexp.MustCompile(`^[-A-Za-z0-9_./]*$`)
)

// validateStoreLabels checks labels like PD's ValidateLabels (same patterns); PD v8.5.7 accepts the
// `engine` key too.
func validateStoreLabels(labels map[string]string) error {
	for k, v := range labels {
		if !labelKeyPattern.MatchString(k) {
			return fmt.Errorf("invalid label key: %s", k)
		}
		if !labelValuePattern.MatchString(v) {
			return fmt.Errorf("invalid label value: %s", v)
		}
	}
	return nil
}

// setStoreLabels merges labels into the store's labels (`POST /pd/api/v1/store/{id}/label`, without force);
// PD answers 500 ErrInvalidStoreID for an unknown store here.
func (c *Cluster) setStoreLabels(id uint64, labels map[string]string) *pdError {
	s, ok := c.stores[id]
	if !ok {
		return &pdError{http.StatusInternalServerError, fmt.Sprintf("[PD:cluster:ErrInvalidStoreID]invalid store id %d, not found", id)}
	}
	for k, v := range labels {
		s.labels[k] = v
	}
	s.labelWrites++
	return nil
}

// progressOffline migrates the replicas of Offline stores for dt, but only while enough other stores of
// the same engine are Up and heartbeating to hold them — max-replicas TiKV stores for a TiKV store, as many
// TiFlash stores as the largest TiFlash replica count for a TiFlash store — (otherwise the replicas have
// nowhere to go and the store stays Offline, as in PD), and turns a store whose migration is complete into
// a Tombstone.
func (c *Cluster) progressOffline(dt time.Duration) {
	for _, s := range c.sortedStores() {
		if s.state != pdapi.StoreStateOffline {
			continue
		}
		need := c.maxReplicas()
		if s.comp == ComponentTiFlash {
			need = c.maxTiFlashReplicas()
		}
		if c.liveUpStoresExcept(s.id, s.comp) < need {
			continue
		}
		s.migrated += dt
		if s.migrated >= c.timings().RegionMigrationTime {
			s.state = pdapi.StoreStateTombstone
			c.unassigned += s.leaders
			s.leaders = 0
			c.log.Info("store became Tombstone", "store", s.id, "engine", s.comp)
		}
	}
}

// regionsOf approximates the store's region count: every region has min(max-replicas, Up TiKV stores)
// replicas spread evenly over the Up TiKV stores (TiFlash stores: tiflashRegionsOf); an Offline store keeps
// the part of its regions not yet migrated.
func (c *Cluster) regionsOf(s *store) int {
	switch s.state {
	case pdapi.StoreStateTombstone:
		return 0
	case pdapi.StoreStateOffline:
		total := c.timings().RegionMigrationTime
		if total <= 0 || s.migrated >= total {
			return 0
		}
		left := float64(total-s.migrated) / float64(total)
		return ceilInt(float64(s.regionsAtOffline) * left)
	}
	if s.comp == ComponentTiFlash {
		return c.tiflashRegions()
	}
	up := c.upStores(ComponentTiKV)
	if up == 0 {
		return 0
	}
	replicas := min(up, max(c.maxReplicas(), 1))
	return ceilInt(float64(c.regionCount) * float64(replicas) / float64(up))
}

// maxReplicas is replication.max-replicas as an int, clamped to what a cluster can mean.
func (c *Cluster) maxReplicas() int {
	if r := c.replication.MaxReplicas; r <= math.MaxUint16 {
		return int(r)
	}
	return math.MaxUint16
}

// maxPeerCount is replication.max-replicas as metapb.Cluster's uint32 max_peer_count.
func (c *Cluster) maxPeerCount() uint32 {
	if r := c.replication.MaxReplicas; r <= math.MaxUint32 {
		return uint32(r)
	}
	return math.MaxUint32
}

func ceilInt(f float64) int {
	n := int(f)
	if float64(n) < f {
		n++
	}
	return n
}
