package simulator

import (
	"fmt"
	"time"
)

// Timings are the durations of the simulated state machine. They are simulator-wide and can be changed at
// run time through the admin API, for every cluster or (`PUT /sim/v1/clusters/{ns}/{tc}/timings`) for one.
type Timings struct {
	// MaxStoreDownTime: a store that misses heartbeats this long is reported Down (PD
	// `schedule.max-store-down-time`).
	MaxStoreDownTime time.Duration
	// StoreDisconnectTime: a store that misses heartbeats this long is reported Disconnected (PD: 20s).
	StoreDisconnectTime time.Duration
	// RegionMigrationTime: an Offline store becomes Tombstone after its regions migrated for this long
	// while at least max-replicas other stores were Up.
	RegionMigrationTime time.Duration
	// LeaderDrainTime: an evict-leader scheduler (or going Offline) moves all leaders off a store within this.
	LeaderDrainTime time.Duration
	// LeaderReturnTime: balancing gives a store back its share of leaders within this.
	LeaderReturnTime time.Duration
	// TiCDCDrainTime: a drained TiCDC capture's tables move to the other captures within this, and
	// balancing gives a capture its share of tables within this.
	TiCDCDrainTime time.Duration
	// PumpOfflineTime: a Pump told to close (`PUT /state/{nodeID}/close`) waits this long, while PD is
	// reachable, before it registers offline and its process exits (real Pump writes a fake binlog and
	// waits for the drainers to consume it).
	PumpOfflineTime time.Duration
	// PDReadyDelay: a PD member answers `GET /pd/api/v2/ready` with 200 (its regions loaded) this long
	// after its pod last started or the cluster bootstrapped, whichever is later.
	PDReadyDelay time.Duration
}

// FastTimings are the defaults, chosen so that tests see every transition within seconds.
func FastTimings() Timings {
	return Timings{
		MaxStoreDownTime:    10 * time.Second,
		StoreDisconnectTime: 0,
		RegionMigrationTime: 3 * time.Second,
		LeaderDrainTime:     2 * time.Second,
		LeaderReturnTime:    2 * time.Second,
		TiCDCDrainTime:      2 * time.Second,
		PumpOfflineTime:     2 * time.Second,
		PDReadyDelay:        2 * time.Second,
	}
}

// RealisticTimings are orders of magnitude of a real small cluster: PD's defaults for the store timers,
// and minutes for data movement.
func RealisticTimings() Timings {
	return Timings{
		MaxStoreDownTime:    30 * time.Minute,
		StoreDisconnectTime: 20 * time.Second,
		RegionMigrationTime: 10 * time.Minute,
		LeaderDrainTime:     time.Minute,
		LeaderReturnTime:    time.Minute,
		TiCDCDrainTime:      time.Minute,
		PumpOfflineTime:     10 * time.Second,
		PDReadyDelay:        10 * time.Second,
	}
}

// Validate reports the first negative duration.
func (t Timings) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"max-store-down-time", t.MaxStoreDownTime}, {"store-disconnect-time", t.StoreDisconnectTime},
		{"region-migration-time", t.RegionMigrationTime}, {"leader-drain-time", t.LeaderDrainTime},
		{"leader-return-time", t.LeaderReturnTime}, {"ticdc-drain-time", t.TiCDCDrainTime},
		{"pump-offline-time", t.PumpOfflineTime}, {"pd-ready-delay", t.PDReadyDelay},
	} {
		if f.d < 0 {
			return fmt.Errorf("%s must not be negative, got %v", f.name, f.d)
		}
	}
	return nil
}

// Options configure a Registry.
type Options struct {
	// Timings of the state machine.
	Timings Timings
	// RegionCount is the number of regions of every new cluster (default 1000).
	RegionCount int
	// MaxReplicas is PD `replication.max-replicas` of every new cluster (default 3).
	MaxReplicas uint64
	// ClusterDomain is appended to member and store addresses (`<pod>.<svc>.<ns>.svc.<domain>`) unless the
	// TidbCluster sets `spec.clusterDomain`; empty means PD's default, no domain.
	ClusterDomain string
	// DefaultVersion is reported for components whose image has no tag (default "v8.5.0").
	DefaultVersion string
	// TiCDCTables is the number of tables the TiCDC captures of every new cluster replicate (default 12).
	TiCDCTables int
}

// DefaultOptions returns FastTimings, 1000 regions, 3 replicas, version v8.5.0 and 12 TiCDC tables.
func DefaultOptions() Options {
	return Options{Timings: FastTimings(), RegionCount: 1000, MaxReplicas: 3, DefaultVersion: "v8.5.0", TiCDCTables: 12}
}

// withDefaults fills zero fields from DefaultOptions and validates; it errors on negative values. A zero
// TiCDCTables takes the default too; a cluster with no tables is set through the admin API.
func (o Options) withDefaults() (Options, error) {
	def := DefaultOptions()
	if o.RegionCount == 0 {
		o.RegionCount = def.RegionCount
	}
	if o.MaxReplicas == 0 {
		o.MaxReplicas = def.MaxReplicas
	}
	if o.DefaultVersion == "" {
		o.DefaultVersion = def.DefaultVersion
	}
	if o.TiCDCTables == 0 {
		o.TiCDCTables = def.TiCDCTables
	}
	if o.RegionCount < 0 {
		return o, fmt.Errorf("region count must not be negative, got %d", o.RegionCount)
	}
	if o.TiCDCTables < 0 {
		return o, fmt.Errorf("TiCDC table count must not be negative, got %d", o.TiCDCTables)
	}
	if err := o.Timings.Validate(); err != nil {
		return o, err
	}
	return o, nil
}
