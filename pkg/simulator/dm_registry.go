package simulator

import "fmt"

// ObserveDM replaces what is known of DMCluster key with obs and settles its state. A DMCluster is
// created by its first pod or PVC and forgotten when none is left.
func (r *Registry) ObserveDM(key ClusterKey, obs DMObservation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.dm[key]
	if obs.empty() {
		if ok {
			delete(r.dm, key)
			r.log.Info("DM cluster forgotten: no pod or PVC left", "dmcluster", key.String())
		}
		return
	}
	if !ok {
		if r.dm == nil {
			r.dm = map[ClusterKey]*dmCluster{}
		}
		d = newDMCluster(key, r.log)
		r.dm[key] = d
		r.log.Info("DM cluster discovered", "dmcluster", key.String())
	}
	d.observe(obs, r.clock.Now())
}

// withDM runs fn on DMCluster key, settled at now, under the lock; create makes a missing one (for admin
// writes that may precede the first pod). It reports whether the DMCluster existed or was made.
func (r *Registry) withDM(key ClusterKey, create bool, fn func(d *dmCluster)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.dm[key]
	if !ok {
		if !create {
			return false
		}
		if r.dm == nil {
			r.dm = map[ClusterKey]*dmCluster{}
		}
		d = newDMCluster(key, r.log)
		r.dm[key] = d
	}
	d.sync(r.clock.Now())
	fn(d)
	return true
}

// dmKeys returns the known DMCluster keys sorted by namespace and name.
func (r *Registry) dmKeys() []ClusterKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]ClusterKey, 0, len(r.dm))
	for k := range r.dm {
		keys = append(keys, k)
	}
	sortKeys(keys)
	return keys
}

// dmConnectRefused returns why a connection to dm-master address t would fail; "" when it would succeed.
func (r *Registry) dmConnectRefused(t dmTarget) string {
	why := fmt.Sprintf("no simulated DMCluster %s", t.key)
	r.withDM(t.key, false, func(d *dmCluster) { _, why = d.resolve(t) })
	return why
}
