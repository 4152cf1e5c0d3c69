package simulator

import (
	"sync"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Registry holds every simulated cluster. It is safe for concurrent use: one lock guards all clusters,
// because every operation is short and in memory (no I/O happens under it).
type Registry struct {
	mu       sync.Mutex
	clock    clock.PassiveClock
	log      klog.Logger
	set      settings
	clusters map[ClusterKey]*Cluster
	// links maps a heterogeneous cluster to the cluster whose PD it joins (heterogeneous.go).
	links map[ClusterKey]ClusterKey
	// dm holds the simulated DMClusters (dm_cluster.go), apart from the TiDB clusters: a DMCluster may
	// share its name with a TidbCluster.
	dm map[ClusterKey]*dmCluster
}

// NewRegistry returns an empty Registry reading time from clk; it errors when opts are invalid (negative
// durations or region count). Zero fields of opts take their DefaultOptions value.
func NewRegistry(opts Options, clk clock.PassiveClock, log klog.Logger) (*Registry, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Registry{
		clock:    clk,
		log:      log,
		set:      settings{opts: opts, timings: opts.Timings},
		clusters: map[ClusterKey]*Cluster{},
		links:    map[ClusterKey]ClusterKey{},
	}, nil
}

// Observe replaces what is known of cluster key with obs and settles its state. A cluster is created by
// its first pod, PVC or TidbCluster and forgotten when none of them is left.
func (r *Registry) Observe(key ClusterKey, obs ClusterObservation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.link(key, obs.TidbCluster)
	c, ok := r.clusters[key]
	if obs.empty() {
		if ok {
			delete(r.clusters, key)
			r.log.Info("cluster forgotten: no pod, PVC or TidbCluster left", "cluster", key.String())
		}
		return
	}
	if !ok {
		c = newCluster(key, &r.set, r.log, r.clock.Now())
		r.clusters[key] = c
		r.log.Info("cluster discovered", "cluster", key.String(), "clusterID", c.id)
	}
	c.observe(obs, r.clock.Now())
}

// Tick advances every cluster to the current time; the simulator calls it on a ticker so that timers fire
// even when nothing asks.
func (r *Registry) Tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	for _, c := range r.clusters {
		c.advance(now)
	}
}

// withCluster runs fn on cluster key, advanced to now, under the lock; create makes a missing cluster
// (for admin writes that may precede the first pod). It reports whether the cluster existed or was made.
func (r *Registry) withCluster(key ClusterKey, create bool, fn func(c *Cluster)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.clusters[key]
	if !ok {
		if !create {
			return false
		}
		c = newCluster(key, &r.set, r.log, r.clock.Now())
		r.clusters[key] = c
	}
	c.advance(r.clock.Now())
	fn(c)
	return true
}

// keys returns the known cluster keys sorted by namespace and name.
func (r *Registry) keys() []ClusterKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]ClusterKey, 0, len(r.clusters))
	for k := range r.clusters {
		keys = append(keys, k)
	}
	sortKeys(keys)
	return keys
}

// Timings returns the current timings.
func (r *Registry) Timings() Timings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set.timings
}

// SetTimings replaces the timings; see UpdateTimings.
func (r *Registry) SetTimings(t Timings) error {
	_, err := r.UpdateTimings(func(cur *Timings) { *cur = t })
	return err
}

// UpdateTimings applies fn to a copy of the timings and installs the result atomically, after advancing
// every cluster to now so that the old timings govern the past. It returns the new timings, or an error
// (and changes nothing) when a duration is negative.
func (r *Registry) UpdateTimings(fn func(t *Timings)) (Timings, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.set.timings
	fn(&t)
	if err := t.Validate(); err != nil {
		return r.set.timings, err
	}
	now := r.clock.Now()
	for _, c := range r.clusters {
		c.advance(now)
	}
	r.set.timings = t
	r.log.Info("timings changed", "timings", t)
	return t, nil
}
