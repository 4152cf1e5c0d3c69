package simulator

import (
	"net/http"
	"testing"
)

func (h *harness) leader() string {
	var name string
	h.with(func(c *Cluster) { name = c.leader })
	return name
}

func (h *harness) memberNames() []string {
	var names []string
	h.with(func(c *Cluster) {
		for _, m := range c.sortedMembers() {
			names = append(names, m.name)
		}
	})
	return names
}

func TestEveryRunningPDPodIsAMemberWithOneLeader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	if got := h.memberNames(); len(got) != 3 {
		t.Fatalf("members = %v, want 3", got)
	}
	if got := h.leader(); got != "basic-pd-0" {
		t.Fatalf("leader = %q, want basic-pd-0", got)
	}
	h.with(func(c *Cluster) {
		m := c.members["basic-pd-1"]
		if c.clientURL(m) != "http://basic-pd-1.basic-pd-peer.default.svc:2379" ||
			c.peerURL(m) != "http://basic-pd-1.basic-pd-peer.default.svc:2380" {
			t.Errorf("URLs = %s %s", c.clientURL(m), c.peerURL(m))
		}
		if m.id != stableID("member", "default", "basic", "basic-pd-1", "uid-basic-pd-1") {
			t.Errorf("member ID %d is not derived from the pod identity", m.id)
		}
	})
}

func TestLeaderReElectedOnlyWithQuorum(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	h.setReady("basic-pd-0", false)
	if got := h.leader(); got != "basic-pd-1" {
		t.Fatalf("leader after pd-0 went unready = %q, want basic-pd-1", got)
	}
	h.setReady("basic-pd-1", false)
	if got := h.leader(); got != "" {
		t.Fatalf("leader with 1 of 3 healthy = %q, want none (no quorum)", got)
	}
	r := h.pd(http.MethodGet, "/pd/api/v1/members", "")
	wantStatus(t, r, http.StatusServiceUnavailable)
	if r.body != "\"[PD:server:ErrLeaderNil]leader is nil\"\n" {
		t.Errorf("no-leader body = %q", r.body)
	}
	h.setReady("basic-pd-0", true)
	if got := h.leader(); got != "basic-pd-0" {
		t.Fatalf("leader after quorum returned = %q, want basic-pd-0", got)
	}
}

func TestMarkedUnhealthyLeaderLosesLeadership(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	h.with(func(c *Cluster) {
		c.members["basic-pd-0"].forcedUnhealthy = true
		c.advanceBy(h.clock.Now(), 0)
	})
	if got := h.leader(); got != "basic-pd-1" {
		t.Fatalf("leader = %q, want basic-pd-1", got)
	}
}

func TestLeaderTransfer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	h.setReady("basic-pd-1", false)
	cases := []struct {
		to     string
		status int
		msg    string
		leader string
	}{
		{to: "basic-pd-2", leader: "basic-pd-2"},
		{to: "basic-pd-2", leader: "basic-pd-2"},
		{to: "nope", status: 500, msg: "no valid pd to transfer etcd leader", leader: "basic-pd-2"},
		{to: "basic-pd-1", status: 500, msg: "[PD:etcd:ErrEtcdMoveLeader]etcd move leader error", leader: "basic-pd-2"},
		{to: "basic-pd-0", leader: "basic-pd-0"},
	}
	for _, tc := range cases {
		var err *pdError
		h.with(func(c *Cluster) { err = c.transferLeader(tc.to) })
		if (err == nil) != (tc.status == 0) || (err != nil && (err.status != tc.status || err.msg != tc.msg)) {
			t.Errorf("transfer to %s = %v, want %d %q", tc.to, err, tc.status, tc.msg)
		}
		if got := h.leader(); got != tc.leader {
			t.Errorf("after transfer to %s leader = %q, want %q", tc.to, got, tc.leader)
		}
	}
}

func TestDeletedMemberDoesNotRejoinWithSamePVC(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	var oldID uint64
	h.with(func(c *Cluster) {
		oldID = c.members["basic-pd-0"].id
		if err := c.deleteMemberByName("basic-pd-0"); err != nil {
			t.Fatalf("delete leader: %v", err)
		}
	})
	if got := h.leader(); got != "basic-pd-1" {
		t.Fatalf("leader after deleting the leader = %q, want basic-pd-1", got)
	}
	// The pod restarts with the same PVC: PD refuses its data, it stays out.
	h.deletePod("basic-pd-0")
	h.addPods(ComponentPD, 3)
	if got := h.memberNames(); len(got) != 2 {
		t.Fatalf("members after restart with the same PVC = %v, want 2", got)
	}
	// A fresh PVC is a new member with a new ID.
	h.setPod(PodObservation{Name: "basic-pd-0", Component: ComponentPD, Running: true, Ready: true, PVCUID: "fresh"})
	h.with(func(c *Cluster) {
		m, ok := c.members["basic-pd-0"]
		if !ok || m.id == oldID || m.ident.pvcUID != "fresh" {
			t.Fatalf("member with a fresh PVC = %+v, want a new member ID", m)
		}
	})
}

func TestNewPVCWaitsUntilOldMemberIsDeleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 3)
	var oldID uint64
	h.with(func(c *Cluster) { oldID = c.members["basic-pd-2"].id })
	h.setPod(PodObservation{Name: "basic-pd-2", Component: ComponentPD, Running: true, Ready: true, PVCUID: "fresh"})
	h.with(func(c *Cluster) {
		m := c.members["basic-pd-2"]
		if m.id != oldID || c.memberHealthy(m) {
			t.Fatalf("old member must stay registered and unhealthy; got %+v healthy=%v", m, c.memberHealthy(m))
		}
		if err := c.deleteMemberByID(oldID); err != nil {
			t.Fatalf("delete by ID: %v", err)
		}
		c.advanceBy(h.clock.Now(), 0)
		if m := c.members["basic-pd-2"]; m == nil || m.id == oldID || !c.memberHealthy(m) {
			t.Fatalf("after deleting the old member the fresh PVC must join; got %+v", m)
		}
	})
}

func TestDeleteMemberErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.with(func(c *Cluster) {
		if err := c.deleteMemberByName("nope"); err == nil || err.status != 404 || err.msg != "not found, pd: nope" {
			t.Errorf("delete unknown name = %v", err)
		}
		if err := c.deleteMemberByID(7); err == nil || err.status != 500 || err.msg != "[PD:etcd:ErrEtcdMemberRemove]etcdserver: member not found: etcdserver: member not found" {
			t.Errorf("delete unknown ID = %v", err)
		}
	})
}

func TestPodWithPendingPVCDoesNotJoin(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.setPod(PodObservation{Name: "basic-pd-0", Component: ComponentPD, Running: true, Ready: true, PVCPending: true})
	if got := h.memberNames(); len(got) != 0 {
		t.Fatalf("members = %v, want none while the PVC is unknown", got)
	}
}

func TestClusterForgottenWhenNothingIsLeft(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.addPods(ComponentPD, 1)
	h.reg.Observe(h.key, ClusterObservation{})
	if len(h.reg.keys()) != 0 {
		t.Fatalf("clusters = %v, want none", h.reg.keys())
	}
}
