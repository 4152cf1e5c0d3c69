package simulator

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// pdMember is a simulated PD member: a pod identity that joined the PD cluster.
type pdMember struct {
	name    string
	id      uint64
	ident   identity
	version string
	// forcedUnhealthy is set through the admin API.
	forcedUnhealthy bool
	loggedHealthy   bool
	// run is the pd-server process last seen running (pod UID and restart count), started when it was
	// first seen; readySince is when it began answering /pd/api/v2/ready with 200 (zero: not yet).
	run        string
	startedAt  time.Time
	readySince time.Time
}

// pdError is an answer PD gives instead of success: a status and the message PD renders as a JSON string.
type pdError struct {
	status int
	msg    string
}

func (e *pdError) Error() string { return fmt.Sprintf("%d %s", e.status, e.msg) }

// syncMembers lets every running PD pod with a known PVC join, as pd-server does on start:
//   - a pod whose identity is already a member just keeps it;
//   - a new identity (fresh PVC) under the name of a still-registered member cannot join, because PD refuses
//     a duplicated name until that member is deleted;
//   - an identity whose member was deleted never rejoins (its data dir belongs to a removed member), so the
//     pod needs a fresh PVC, which is a new identity and gets a new member ID;
//   - joining needs a leader (etcd adds members through a quorum), except for the first member, which
//     bootstraps the cluster.
func (c *Cluster) syncMembers() {
	for _, p := range c.podsOf(ComponentPD) {
		if !p.Running || p.PVCPending || (len(c.members) > 0 && !c.pdAvailable()) {
			continue
		}
		id := identity{pod: p.Name, pvcUID: p.PVCUID}
		if m, ok := c.members[p.Name]; ok {
			if m.ident == id {
				m.version = c.version(p)
			}
			continue
		}
		if c.removedMembers[id] {
			continue
		}
		m := &pdMember{
			name:    p.Name,
			id:      stableID("member", c.key.Namespace, c.key.Name, p.Name, p.PVCUID),
			ident:   id,
			version: c.version(p),
		}
		c.members[p.Name] = m
		c.log.Info("PD member joined", "member", m.name, "memberID", m.id)
		c.electLeader()
	}
}

// clientURL is the client URL the member advertises: http[s]://<pod>.<tc>-pd-peer.<ns>.svc[.<domain>]:2379
// (https when the cluster speaks TLS). Addresses are derived when rendered, so they follow the
// TidbCluster's clusterDomain whenever it is seen.
func (c *Cluster) clientURL(m *pdMember) string {
	return c.tls.scheme() + "://" + c.podHost(m.name, ComponentPD) + ":" + pdClientPort
}

// peerURL is the peer URL the member advertises (port 2380).
func (c *Cluster) peerURL(m *pdMember) string {
	return c.tls.scheme() + "://" + c.podHost(m.name, ComponentPD) + ":2380"
}

// memberRunning reports whether the member's pd-server process runs (its pod, same identity, is Running).
func (c *Cluster) memberRunning(m *pdMember) bool {
	p, ok := c.podWithIdentity(m.ident)
	return ok && p.Running
}

// memberHealthy is PD's health of a member: the process runs, the pod is Ready and no fault says otherwise.
func (c *Cluster) memberHealthy(m *pdMember) bool {
	p, ok := c.podWithIdentity(m.ident)
	return ok && p.Running && p.Ready && !m.forcedUnhealthy
}

// healthyMembers counts healthy members.
func (c *Cluster) healthyMembers() int {
	n := 0
	for _, m := range c.members {
		if c.memberHealthy(m) {
			n++
		}
	}
	return n
}

// hasQuorum reports whether a majority of the members is healthy, which etcd needs to elect a leader.
func (c *Cluster) hasQuorum() bool {
	return len(c.members) > 0 && 2*c.healthyMembers() > len(c.members)
}

// electLeader keeps a healthy leader while there is a quorum and otherwise elects the healthy member with
// the lowest name (deterministic, where etcd would pick at random); without a quorum there is no leader.
func (c *Cluster) electLeader() {
	if !c.hasQuorum() {
		if c.leader != "" {
			c.log.Info("PD lost its leader: no quorum", "previousLeader", c.leader)
		}
		c.setLeader("", api.LeaderCauseQuorumLost)
		return
	}
	if m, ok := c.members[c.leader]; ok && c.memberHealthy(m) {
		return
	}
	previous := c.leader
	for _, m := range c.sortedMembers() {
		if c.memberHealthy(m) {
			c.setLeader(m.name, api.LeaderCauseElection)
			c.log.Info("PD leader elected", "leader", m.name, "previousLeader", previous)
			return
		}
	}
}

// sortedMembers returns the members by name.
func (c *Cluster) sortedMembers() []*pdMember {
	out := make([]*pdMember, 0, len(c.members))
	for _, m := range c.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// memberByID returns the member with id.
func (c *Cluster) memberByID(id uint64) (*pdMember, bool) {
	for _, m := range c.members {
		if m.id == id {
			return m, true
		}
	}
	return nil, false
}

// transferLeader moves PD leadership to name, as `POST /pd/api/v1/leader/transfer/{name}` does; it fails
// like PD when name is not a member (500) or cannot take leadership (500).
func (c *Cluster) transferLeader(name string) *pdError {
	m, ok := c.members[name]
	if !ok {
		return &pdError{http.StatusInternalServerError, "no valid pd to transfer etcd leader"}
	}
	if !c.memberHealthy(m) {
		return &pdError{http.StatusInternalServerError, "[PD:etcd:ErrEtcdMoveLeader]etcd move leader error"}
	}
	if c.leader != name {
		c.log.Info("PD leader transferred", "from", c.leader, "to", name)
		c.setLeader(name, api.LeaderCauseTransfer)
	}
	return nil
}

// deleteMemberByName removes a member as `DELETE /pd/api/v1/members/name/{name}`: 404 when unknown.
func (c *Cluster) deleteMemberByName(name string) *pdError {
	m, ok := c.members[name]
	if !ok {
		return &pdError{http.StatusNotFound, "not found, pd: " + name}
	}
	c.removeMember(m)
	return nil
}

// deleteMemberByID removes a member as `DELETE /pd/api/v1/members/id/{id}`: etcd's error, 500, when unknown.
func (c *Cluster) deleteMemberByID(id uint64) *pdError {
	m, ok := c.memberByID(id)
	if !ok {
		return &pdError{http.StatusInternalServerError,
			"[PD:etcd:ErrEtcdMemberRemove]etcdserver: member not found: etcdserver: member not found"}
	}
	c.removeMember(m)
	return nil
}

// removeMember forgets m, remembers its identity so that its data never rejoins, and re-elects if needed.
func (c *Cluster) removeMember(m *pdMember) {
	delete(c.members, m.name)
	c.removedMembers[m.ident] = true
	c.log.Info("PD member removed", "member", m.name, "memberID", m.id)
	if c.leader == m.name {
		c.setLeader("", api.LeaderCauseMemberRemoved)
	}
	c.electLeader()
}
