package simulator

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// A heterogeneous cluster is a TidbCluster without spec.pd whose spec.cluster names another TidbCluster
// (namespace defaulting to its own): its TiKV, TiFlash, TiDB, TiCDC and Pump processes join the PD of that
// referenced cluster. The simulator models that by handing the heterogeneous cluster's pods to the
// referenced cluster's state (they register there: store IDs from its allocator, captures, the Pump
// registry, TiDB's PD dependence), each pod remembering the cluster it belongs to (PodObservation.Owner),
// so that its stores and servers advertise the heterogeneous cluster's own names
// (<pod>.<hetero>-tikv-peer.<ns>.svc:20160). Requests to the heterogeneous cluster's addresses are routed
// to the referenced cluster's state, except PD's: the heterogeneous cluster has no PD, so <hetero>-pd has
// no endpoints.

// joinedCluster returns the cluster whose PD a TidbCluster joins: spec.cluster when spec.pd is absent;
// nil for a cluster with its own PD or none named.
func joinedCluster(u *unstructured.Unstructured) *ClusterKey {
	if _, hasPD, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "pd"); hasPD {
		return nil
	}
	name, _, _ := unstructured.NestedString(u.Object, "spec", "cluster", "name")
	if name == "" {
		return nil
	}
	ns, _, _ := unstructured.NestedString(u.Object, "spec", "cluster", "namespace")
	if ns == "" {
		ns = u.GetNamespace()
	}
	return &ClusterKey{Namespace: ns, Name: name}
}

// joining returns the heterogeneous clusters whose TidbCluster joins the PD of key, sorted.
func (t *tidbClusterWatch) joining(key ClusterKey) []ClusterKey {
	t.mu.RLock()
	lister := t.lister
	t.mu.RUnlock()
	if lister == nil {
		return nil
	}
	objs, _ := lister.List(labels.Everything())
	var out []ClusterKey
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if j := joinedCluster(u); j != nil && *j == key {
			if k, ok := tidbClusterKey(u); ok {
				out = append(out, k)
			}
		}
	}
	sortKeys(out)
	return out
}

// addJoinedPods appends to obs the simulated pods of every heterogeneous cluster that joins key, owned by
// that cluster. A pod whose name is already taken (a heterogeneous cluster of another namespace with the
// same pod names) is left out: the cluster state keys pods by name.
func (w *Watcher) addJoinedPods(ctx context.Context, key ClusterKey, obs *ClusterObservation) bool {
	if w.tcs == nil {
		return false
	}
	pending := false
	taken := map[string]bool{}
	for _, p := range obs.Pods {
		taken[p.Name] = true
	}
	for _, h := range w.tcs.joining(key) {
		for _, p := range w.ownPods(ctx, h) {
			if taken[p.Name] {
				w.log.Info("pod of a heterogeneous cluster left out: its name is taken", "pod", p.Name, "cluster", h.String())
				continue
			}
			taken[p.Name] = true
			p.Owner = h
			pending = pending || p.PVCPending
			obs.Pods = append(obs.Pods, p)
		}
	}
	return pending
}

// ownPods returns the observed simulated pods labelled with key's instance.
func (w *Watcher) ownPods(ctx context.Context, key ClusterKey) []PodObservation {
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue, LabelInstance: key.Name})
	pods, _ := w.pods.Pods(key.Namespace).List(selector)
	var out []PodObservation
	for _, pod := range pods {
		comp := Component(pod.Labels[LabelComponent])
		if simulatedComponents[comp] {
			out = append(out, w.podObservation(ctx, pod, comp))
		}
	}
	return out
}

// requeueJoined queues the referenced cluster of key now and the one it referenced before, so that the
// pods of a heterogeneous cluster move with its spec.cluster.
func (w *Watcher) requeueJoined(key ClusterKey, obs ClusterObservation) {
	w.joinMu.Lock()
	prev, had := w.joined[key]
	var now *ClusterKey
	if obs.TidbCluster != nil {
		now = obs.TidbCluster.Joins
	}
	if now != nil {
		w.joined[key] = *now
	} else {
		delete(w.joined, key)
	}
	w.joinMu.Unlock()
	if had && (now == nil || *now != prev) {
		w.queue.Add(prev)
	}
	if now != nil {
		w.queue.Add(*now)
	}
}

// route points a target of a heterogeneous cluster at the state of the cluster it joins: the pods that
// serve it live there. PD addresses stay: the heterogeneous cluster has no PD of its own.
func (r *Registry) route(t target) target {
	if t.component() == ComponentPD {
		return t
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if to, ok := r.links[t.key]; ok {
		t.owner, t.key = t.key, to
	}
	return t
}

// link records (or, with nil, forgets) the cluster that key joins.
func (r *Registry) link(key ClusterKey, tc *TidbClusterInfo) {
	if tc != nil && tc.Joins != nil {
		r.links[key] = *tc.Joins
		return
	}
	delete(r.links, key)
}

// ownerOf is the cluster whose names pod advertises: the heterogeneous cluster it came from, else c.
func (c *Cluster) ownerOf(pod string) ClusterKey {
	if k, ok := c.podOwners[pod]; ok {
		return k
	}
	return c.key
}

// rememberOwners records the owner of every observed pod; the record outlives the pod, because stores
// and Pump nodes keep their addresses after their pods are gone.
func (c *Cluster) rememberOwners(pods []PodObservation) {
	for _, p := range pods {
		if p.Owner != (ClusterKey{}) && p.Owner != c.key {
			c.podOwners[p.Name] = p.Owner
		} else {
			delete(c.podOwners, p.Name)
		}
	}
}

// podFor returns the observed pod a per-pod target names, when it belongs to the target's cluster.
func (c *Cluster) podFor(t target) (PodObservation, bool) {
	p, ok := c.pods[t.pod]
	if !ok || c.ownerOf(p.Name) != t.ownerKey() {
		return PodObservation{}, false
	}
	return p, true
}

// podsFor returns the observed pods of the target's component that belong to the target's cluster.
func (c *Cluster) podsFor(t target) []PodObservation {
	var out []PodObservation
	for _, p := range c.podsOf(t.component()) {
		if c.ownerOf(p.Name) == t.ownerKey() {
			out = append(out, p)
		}
	}
	return out
}

// sortKeys sorts keys by namespace and name.
func sortKeys(keys []ClusterKey) {
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
}

// ownerKey is the cluster whose pods serve the target: the heterogeneous cluster it names when routed to
// the cluster it joins, else its own.
func (t target) ownerKey() ClusterKey {
	if t.owner != (ClusterKey{}) {
		return t.owner
	}
	return t.key
}
