package simulator

import (
	"sort"
	"time"
)

// The Pump (TiDB binlog) model, after tidb-binlog's pump server (pump/server.go, pump/node.go,
// pkg/node):
//   - the registry is PD's etcd (`/tidb-binlog/v1/pumps/<nodeID>`): one entry per node ID holding the
//     node's host, state, max commit TS and update TS. Nothing ever deletes an entry; a pump that crashes
//     or whose pod is deleted leaves it as it was (online): the start script is assumed not to hand
//     SIGTERM to Pump, which would close and write paused (see docs/simulator.md);
//   - the node ID is `<hostname>:<port of the listen address>`, kept in the data dir's .node file; a pod's
//     hostname is its name, so it is `<pod>:8250` for every run and every PVC of the pod;
//   - every run of a Pump pod's process (pod UID plus restarts of its `pump` container) starts once PD is
//     reachable (it needs PD's cluster ID and a TSO) and registers its node online, whatever the entry
//     said before; while online it heartbeats its max commit TS and update TS;
//   - `PUT /state/{nodeID}/close` sets the process's own state to closing and starts Close: Close cancels
//     the server context (which stops the heartbeat, so the registry keeps saying online), waits until
//     the drainers consumed a last fake binlog (PumpOfflineTime here, a clock that runs only while PD is
//     reachable because writing the binlog needs a TSO), registers the node offline and stops the server:
//     the process exits and the pod's address refuses connections until the process runs again;
//   - `pause` is the same without the wait: the node registers paused and the process exits.

// Pump node states, as tidb-binlog's pkg/node names them.
const (
	pumpOnline  = "online"
	pumpPausing = "pausing"
	pumpPaused  = "paused"
	pumpClosing = "closing"
	pumpOffline = "offline"
)

// pumpNode is one entry of the Pump registry, plus the run of its pod's process that last registered it.
type pumpNode struct {
	id    string
	pod   string
	host  string
	state string
	// maxCommitTS and updateTS are the TSOs the node last wrote to the registry.
	maxCommitTS int64
	updateTS    int64
	// proc is the run of the pod's process the simulator follows; nil when none runs (or it crashed).
	proc *pumpProcess
}

// pumpProcess is one run of a Pump pod's process.
type pumpProcess struct {
	podUID   string
	restarts int32
	// state is the pump's own (in-memory) state: online, then closing or pausing once told so.
	state string
	// closeLeft is how much PD-reachable time a closing pump still needs before it is offline.
	closeLeft time.Duration
	// exited is set once the process ended after going offline or paused; the pod keeps running.
	exited bool
}

// serving reports whether the run answers on port 8250.
func (p *pumpProcess) serving() bool { return p != nil && !p.exited }

// tsoAt is PD's TSO at t: physical milliseconds shifted over 18 logical bits.
func tsoAt(t time.Time) int64 { return t.UnixMilli() << 18 }

// pumpNodeID is the node ID real Pump derives for pod: its hostname and the listen port.
func pumpNodeID(pod string) string { return pod + ":" + pumpPort }

// pumpHost is the address a Pump pod advertises, as the TiDB Operator's start script sets
// `-advertise-addr`: `<pod>.<tc>-pump:8250`, or `<pod>.<tc>-pump.<ns>.svc.<domain>:8250` when the
// TidbCluster sets spec.clusterDomain.
func (c *Cluster) pumpHost(pod string) string {
	key := c.ownerOf(pod)
	host := pod + "." + key.Name + "-pump"
	if c.tcDomain != "" {
		host += "." + key.Namespace + ".svc." + c.tcDomain
	}
	return host + ":" + pumpPort
}

// pumpCanReachPD reports whether a Pump reaches PD (and PD's etcd): a leader and not made unreachable.
func (c *Cluster) pumpCanReachPD() bool { return c.pdAvailable() && !c.pdUnreachable }

// sortedPumpNodes returns the registry entries by node ID.
func (c *Cluster) sortedPumpNodes() []*pumpNode {
	out := make([]*pumpNode, 0, len(c.pumpNodes))
	for _, n := range c.pumpNodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// servingPump returns the registry entry of pod when the pod's process serves, else nil.
func (c *Cluster) servingPump(pod string) *pumpNode {
	n := c.pumpNodes[pumpNodeID(pod)]
	if n == nil || n.pod != pod || !n.proc.serving() {
		return nil
	}
	return n
}

// syncPumps forgets the runs whose process stopped (pod gone, not Running, recreated or its container
// restarted), leaving their registry entries as they were, and starts a run for every Running Pump pod
// without one while PD is reachable: it registers the pod's node online at now.
func (c *Cluster) syncPumps(now time.Time) {
	for _, n := range c.pumpNodes {
		if n.proc == nil {
			continue
		}
		p, ok := c.pods[n.pod]
		if !ok || p.Component != ComponentPump || !p.Running || p.UID != n.proc.podUID || p.Restarts != n.proc.restarts {
			c.log.Info("Pump process stopped; its registry entry stays", "pod", n.pod, "node", n.id, "state", n.state)
			n.proc = nil
		}
	}
	if !c.pumpCanReachPD() {
		return
	}
	for _, p := range c.podsOf(ComponentPump) {
		id := pumpNodeID(p.Name)
		n := c.pumpNodes[id]
		if !p.Running || (n != nil && n.proc != nil) {
			continue
		}
		if n == nil {
			n = &pumpNode{id: id, pod: p.Name}
			c.pumpNodes[id] = n
		}
		n.host, n.state = c.pumpHost(p.Name), pumpOnline
		n.maxCommitTS, n.updateTS = tsoAt(now), tsoAt(now)
		n.proc = &pumpProcess{podUID: p.UID, restarts: p.Restarts, state: pumpOnline}
		c.log.Info("Pump node registered online", "pod", p.Name, "node", id, "host", n.host)
	}
}

// progressPumps runs one step of dt ending at now: online pumps heartbeat, closing pumps count down
// PumpOfflineTime while PD is reachable and then register offline and exit.
func (c *Cluster) progressPumps(now time.Time, dt time.Duration) {
	if !c.pumpCanReachPD() {
		return
	}
	for _, n := range c.sortedPumpNodes() {
		switch {
		case !n.proc.serving():
		case n.proc.state == pumpOnline:
			n.state, n.maxCommitTS, n.updateTS = pumpOnline, tsoAt(now), tsoAt(now)
		case n.proc.state == pumpClosing:
			n.proc.closeLeft -= dt
			if n.proc.closeLeft <= 0 {
				c.exitPump(n, pumpOffline, now)
			}
		}
	}
}

// exitPump ends n's process after it committed state (offline or paused) to the registry, which needs PD.
func (c *Cluster) exitPump(n *pumpNode, state string, now time.Time) {
	if c.pumpCanReachPD() {
		n.state, n.maxCommitTS, n.updateTS = state, tsoAt(now), tsoAt(now)
	}
	n.proc.exited = true
	c.log.Info("Pump process exited", "pod", n.pod, "node", n.id, "registry", n.state)
}

// pumpAction is `PUT /state/{nodeID}/{action}` answered by the pump serving n: it returns the message and
// whether the action was applied. The checks and their order are Pump's: the node ID must be this pump's,
// the pump must be online, the action must be pause or close.
func (c *Cluster) pumpAction(n *pumpNode, nodeID, action string, now time.Time) (string, bool) {
	switch {
	case nodeID != n.id:
		return "invalide nodeID " + nodeID + ", this pump's nodeID is " + n.id, false
	case n.proc.state != pumpOnline:
		return "this pump's state is " + n.proc.state + ", apply " + action + " failed!", false
	case action == "close":
		n.proc.state, n.proc.closeLeft = pumpClosing, c.timings().PumpOfflineTime
		c.log.Info("Pump closing", "pod", n.pod, "node", n.id)
	case action == "pause":
		n.proc.state = pumpPausing
		c.exitPump(n, pumpPaused, now)
	default:
		return "invalide action " + action, false
	}
	return "apply action " + action + " success!", true
}
