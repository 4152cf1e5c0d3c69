package simulator

import (
	"sort"
	"strconv"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// A DMCluster (TiDB Data Migration) is simulated apart from the TiDB clusters: its pods carry
// `app.kubernetes.io/name=dm-cluster`, and a DMCluster may share its name with a TidbCluster of the same
// namespace. The simulator answers dm-master's HTTP API (dm_api.go) from this state:
//   - every Running dm-master pod joins as a member, unless it was deleted from the members and its pod
//     has not been recreated since (a new pod UID: new data, a new member); a member whose pod stops
//     stays a member, not alive, until it is deleted;
//   - the leader is the first member to run, kept until it is evicted, stops being alive or is deleted;
//     no member leads while fewer than a quorum of the members is alive;
//   - every Running dm-worker pod registers (stage free) while there is a leader; a worker whose pod no
//     longer runs is offline until it is deleted; a deleted worker whose pod runs again registers again.

// Component label values of the DM pods.
const (
	ComponentDMMaster Component = "dm-master"
	ComponentDMWorker Component = "dm-worker"
)

// dmLabelName is the `app.kubernetes.io/name` of every DM object.
const dmLabelName = "dm-cluster"

// LabelName is the `app.kubernetes.io/name` label.
const LabelName = "app.kubernetes.io/name"

// Ports of the simulated DM endpoints.
const (
	dmMasterPort     = "8261"
	dmMasterPeerPort = "8291"
	dmWorkerPort     = "8262"
)

// DMObservation is the observed state of one DMCluster: its dm-master and dm-worker pods.
type DMObservation struct {
	Pods []PodObservation
	// HasPVCs reports whether a PVC of the DMCluster still exists; a DMCluster with neither pods nor
	// PVCs is forgotten (a new one of the same name starts from new data).
	HasPVCs bool
}

// empty reports whether nothing of the DMCluster exists any more.
func (o DMObservation) empty() bool { return len(o.Pods) == 0 && !o.HasPVCs }

// dmMaster is one member of the simulated dm-master cluster.
type dmMaster struct {
	name    string
	id      uint64
	podUID  string
	joinSeq uint64
	// proc is the pod UID and restart count of the process last seen running ("" when not running).
	proc      string
	startedAt time.Time
	evicted   bool
	unhealthy bool
}

// dmWorker is one registered dm-worker.
type dmWorker struct {
	name, addr string
	offline    bool
}

// dmCluster is the simulated dm-master of one DMCluster; every method expects the Registry lock held.
type dmCluster struct {
	key     ClusterKey
	log     klog.Logger
	pods    map[string]PodObservation
	masters map[string]*dmMaster
	// deleted maps a deleted member to the UID of its pod when it was deleted.
	deleted map[string]string
	leader  string
	workers map[string]*dmWorker
	seq     uint64
	joins   uint64

	leaderChanges []api.LeaderChange
	evictions     []api.DMEviction
	deletes       []api.DMDelete

	faults      []*fault
	nextFaultID int
	// tlsOnly: the dm-master speaks TLS only (dm_api.go); the counters are of the requests received.
	tlsOnly       bool
	tlsRequests   uint64
	plainRequests uint64
	plainRefused  uint64
}

// dmHistoryLimit bounds each history list.
const dmHistoryLimit = 256

func newDMCluster(key ClusterKey, log klog.Logger) *dmCluster {
	return &dmCluster{
		key: key, log: log.WithValues("dmcluster", key.String()),
		pods: map[string]PodObservation{}, masters: map[string]*dmMaster{}, deleted: map[string]string{},
		workers: map[string]*dmWorker{},
	}
}

// observe replaces the observed pods and settles the state at now.
func (d *dmCluster) observe(obs DMObservation, now time.Time) {
	d.pods = make(map[string]PodObservation, len(obs.Pods))
	for _, p := range obs.Pods {
		d.pods[p.Name] = p
	}
	d.sync(now)
}

// sync joins members, follows their processes, elects a leader and registers workers.
func (d *dmCluster) sync(now time.Time) {
	d.syncMasters(now)
	d.elect(now)
	d.syncWorkers()
}

// syncMasters joins every running dm-master pod that is not a deleted member and follows each member's
// process: a new process forgets a leader eviction.
func (d *dmCluster) syncMasters(now time.Time) {
	for _, p := range d.sortedPods(ComponentDMMaster) {
		if uid, gone := d.deleted[p.Name]; gone && (uid == p.UID || !p.Running) {
			continue
		}
		delete(d.deleted, p.Name)
		if _, ok := d.masters[p.Name]; !ok && p.Running {
			d.joins++
			d.masters[p.Name] = &dmMaster{name: p.Name, id: stableID("dm-master", d.key.Namespace, d.key.Name, p.Name, p.UID),
				podUID: p.UID, joinSeq: d.joins}
			d.log.Info("dm-master member joined", "member", p.Name)
		}
	}
	for _, m := range d.masters {
		proc := ""
		if p, ok := d.pods[m.name]; ok && p.Running {
			proc = p.UID + "/" + strconv.Itoa(int(p.Restarts))
		}
		if proc != m.proc {
			m.proc, m.evicted = proc, false
			if proc != "" {
				m.startedAt = now
			}
		}
	}
}

// alive reports whether a member answers: its pod runs and it is not marked unhealthy.
func (d *dmCluster) alive(m *dmMaster) bool { return m.proc != "" && !m.unhealthy }

// quorum reports whether more than half of the members are alive.
func (d *dmCluster) quorum() bool {
	alive := 0
	for _, m := range d.masters {
		if d.alive(m) {
			alive++
		}
	}
	return alive > len(d.masters)/2
}

// elect keeps the leader while it is an alive member and a quorum is alive, else chooses the alive,
// not evicted member that joined first.
func (d *dmCluster) elect(now time.Time) {
	if !d.quorum() {
		if d.leader != "" {
			d.changeLeader(now, "", api.LeaderCauseQuorumLost)
		}
		return
	}
	if m, ok := d.masters[d.leader]; ok && d.alive(m) {
		return
	}
	if next := d.candidate(""); next != "" {
		d.changeLeader(now, next, api.LeaderCauseElection)
	}
}

// candidate returns the alive, not evicted member that joined first, other than except; "" if none.
func (d *dmCluster) candidate(except string) string {
	best := (*dmMaster)(nil)
	for _, m := range d.masters {
		if m.name == except || !d.alive(m) || m.evicted {
			continue
		}
		if best == nil || m.joinSeq < best.joinSeq {
			best = m
		}
	}
	if best == nil {
		return ""
	}
	return best.name
}

// changeLeader records a leader change.
func (d *dmCluster) changeLeader(now time.Time, to, cause string) {
	d.seq++
	d.leaderChanges = appendBounded(d.leaderChanges, api.LeaderChange{Seq: d.seq, At: now, From: d.leader, To: to, Cause: cause})
	d.log.Info("dm-master leader changed", "from", d.leader, "to", to, "cause", cause)
	d.leader = to
}

// syncWorkers registers running dm-worker pods (with a leader to register with) and marks the workers
// whose pod does not run offline.
func (d *dmCluster) syncWorkers() {
	for _, p := range d.sortedPods(ComponentDMWorker) {
		if _, ok := d.workers[p.Name]; !ok && p.Running && d.leader != "" {
			d.workers[p.Name] = &dmWorker{name: p.Name, addr: p.Name + "." + d.key.Name + "-dm-worker-peer:" + dmWorkerPort}
		}
	}
	for _, w := range d.workers {
		p, ok := d.pods[w.name]
		w.offline = !ok || !p.Running
	}
}

// evict handles `PUT leader/1` on pod's member: it stops campaigning and, if it leads, hands leadership
// to the first other alive member; with no such member the request is refused. It returns dm-master's
// result and message.
func (d *dmCluster) evict(now time.Time, pod string) (bool, string) {
	m, ok := d.masters[pod]
	ev := api.DMEviction{At: now, Pod: pod, WasLeader: pod == d.leader}
	switch {
	case !ok:
		ev.Msg = "dm-master " + pod + " is not a member of the cluster"
	case ev.WasLeader && d.candidate(pod) == "":
		ev.Msg = "no other dm-master member to take leadership"
	default:
		m.evicted, ev.Accepted = true, true
		if ev.WasLeader {
			d.changeLeader(now, d.candidate(pod), api.LeaderCauseTransfer)
		}
	}
	d.seq++
	ev.Seq, ev.NewLeader = d.seq, d.leader
	d.evictions = appendBounded(d.evictions, ev)
	return ev.Accepted, ev.Msg
}

// unevict handles `PUT leader/0`: the member campaigns again.
func (d *dmCluster) unevict(now time.Time, pod string) {
	if m, ok := d.masters[pod]; ok {
		m.evicted = false
		d.elect(now)
	}
}

// deleteMember handles `DELETE members/{kind}/{name}` and returns dm-master's result and message.
func (d *dmCluster) deleteMember(now time.Time, kind, name string) (bool, string) {
	del := api.DMDelete{At: now, Kind: kind, Name: name}
	switch kind {
	case "master":
		del.Accepted, del.Msg = d.deleteMaster(now, name)
	case "worker":
		del.Accepted, del.Msg = d.deleteWorker(name)
	default:
		del.Msg = "invalid offline member type " + kind
	}
	d.seq++
	del.Seq = d.seq
	d.deletes = appendBounded(d.deletes, del)
	return del.Accepted, del.Msg
}

func (d *dmCluster) deleteMaster(now time.Time, name string) (bool, string) {
	m, ok := d.masters[name]
	if !ok {
		return false, "dm-master with name " + name + " not exists"
	}
	delete(d.masters, name)
	d.deleted[name] = m.podUID
	if p, ok := d.pods[name]; ok {
		d.deleted[name] = p.UID
	}
	d.log.Info("dm-master member deleted", "member", name)
	if d.leader == name {
		d.changeLeader(now, "", api.LeaderCauseMemberRemoved)
	}
	d.elect(now)
	return true, ""
}

func (d *dmCluster) deleteWorker(name string) (bool, string) {
	w, ok := d.workers[name]
	switch {
	case !ok:
		return false, "dm-worker with name " + name + " not exists"
	case !w.offline:
		return false, "dm-worker with name " + name + " is still online, must shut it down first"
	}
	delete(d.workers, name)
	d.log.Info("dm-worker registration deleted", "worker", name)
	return true, ""
}

// sortedPods returns the observed pods of comp sorted by name.
func (d *dmCluster) sortedPods(comp Component) []PodObservation {
	var out []PodObservation
	for _, p := range d.pods {
		if p.Component == comp {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sortedMasters returns the members sorted by name.
func (d *dmCluster) sortedMasters() []*dmMaster {
	out := make([]*dmMaster, 0, len(d.masters))
	for _, m := range d.masters {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// sortedWorkers returns the workers sorted by name.
func (d *dmCluster) sortedWorkers() []*dmWorker {
	out := make([]*dmWorker, 0, len(d.workers))
	for _, w := range d.workers {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// appendBounded appends v, dropping the oldest entries beyond dmHistoryLimit.
func appendBounded[T any](list []T, v T) []T {
	list = append(list, v)
	if len(list) > dmHistoryLimit {
		list = list[len(list)-dmHistoryLimit:]
	}
	return list
}
