package simulator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// threeMasters starts dm-master pods 0, 1, 2 in that order and two dm-workers.
func threeMasters(t *testing.T) *dmHarness {
	d := newDMHarness(t)
	for i := 0; i < 3; i++ {
		d.run(ComponentDMMaster, i, "uid-m"+string(rune('0'+i)))
	}
	d.run(ComponentDMWorker, 0, "uid-w0")
	d.run(ComponentDMWorker, 1, "uid-w1")
	return d
}

func TestDMMembersAnswerWhatWasAsked(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)

	all := d.members(d.master(http.MethodGet, "/apis/v1alpha1/members"))
	if !all.Result || len(all.Members) != 3 || all.Members[0].Leader == nil || all.Members[1].Master == nil || all.Members[2].Worker == nil {
		t.Fatalf("members without flags = %+v", all)
	}
	masters := d.members(d.master(http.MethodGet, "/apis/v1alpha1/members?master=true"))
	if len(masters.Members) != 1 || masters.Members[0].Master == nil || len(masters.Members[0].Master.Masters) != 3 {
		t.Fatalf("masters = %+v", masters)
	}
	m0 := masters.Members[0].Master.Masters[0]
	if m0.Name != "basic-dm-master-0" || !m0.Alive || m0.MemberID == "" || m0.PeerURLs[0] != "http://basic-dm-master-0.basic-dm-master-peer:8291" ||
		m0.ClientURLs[0] != "http://basic-dm-master-0.basic-dm-master-peer:8261" {
		t.Errorf("master 0 = %+v", m0)
	}
	leader := d.members(d.master(http.MethodGet, "/apis/v1alpha1/members?leader=true"))
	if len(leader.Members) != 1 || leader.Members[0].Leader.Name != "basic-dm-master-0" {
		t.Errorf("leader = %+v (want the first to run)", leader.Members[0].Leader)
	}
	workers := d.members(d.master(http.MethodGet, "/apis/v1alpha1/members?worker=true"))
	if w := workers.Members[0].Worker.Workers; len(w) != 2 || w[1] != (dmWorkerJSON{Name: "basic-dm-worker-1",
		Addr: "basic-dm-worker-1.basic-dm-worker-peer:8262", Stage: "free"}) {
		t.Errorf("workers = %+v", w)
	}
	for _, host := range []string{"basic-dm-master.default.svc", "basic-dm-master.default.svc.cluster.local", "basic-dm-master-peer.default",
		"basic-dm-master-2.basic-dm-master-peer.default.svc"} {
		wantStatus(t, d.proxy(http.MethodGet, "http://"+host+":8261/apis/v1alpha1/members?leader=true", ""), http.StatusOK)
	}
	wantStatus(t, d.master(http.MethodGet, "/apis/v1alpha1/nothing"), http.StatusNotFound)
	// DM pods make no TiDB cluster of the same name.
	if d.reg.withCluster(ClusterKey{Namespace: "default", Name: "basic"}, false, func(*Cluster) {}) {
		t.Error("the DM pods created a TiDB cluster")
	}
}

func TestDMAddressesThatRefuse(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)
	d.stop("basic-dm-master-2")
	wantStatus(t, d.pod("basic-dm-master-2", http.MethodGet, "/apis/v1alpha1/members"), http.StatusBadGateway)
	wantStatus(t, d.proxy(http.MethodGet, "http://other-dm-master.default:8261/apis/v1alpha1/members", ""), http.StatusBadGateway)
	for _, name := range []string{"basic-dm-master-0", "basic-dm-master-1", "basic-dm-master-2"} {
		d.stop(name)
	}
	r := d.master(http.MethodGet, "/apis/v1alpha1/members")
	if r.status != http.StatusBadGateway || !strings.Contains(r.body, "no endpoints") {
		t.Errorf("no running master: %d %s", r.status, r.body)
	}
}

func TestDMEvictLeaderOnItsPod(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)
	// Evicting a member that does not lead only stops it campaigning.
	if res := d.result(d.pod("basic-dm-master-1", http.MethodPut, "/apis/v1alpha1/leader/1")); !res.Result {
		t.Fatalf("evicting a follower: %+v", res)
	}
	if res := d.result(d.pod("basic-dm-master-0", http.MethodPut, "/apis/v1alpha1/leader/1")); !res.Result {
		t.Fatalf("evicting the leader: %+v", res)
	}
	st := d.state()
	if st.Leader != "basic-dm-master-2" {
		t.Fatalf("leader after evicting 0 with 1 evicted = %q, want basic-dm-master-2", st.Leader)
	}
	last := st.LeaderChanges[len(st.LeaderChanges)-1]
	if last.From != "basic-dm-master-0" || last.To != "basic-dm-master-2" || last.Cause != api.LeaderCauseTransfer {
		t.Errorf("leader change = %+v", last)
	}
	if len(st.Evictions) != 2 || st.Evictions[0].WasLeader || !st.Evictions[1].WasLeader || st.Evictions[1].NewLeader != "basic-dm-master-2" ||
		st.Evictions[1].Seq <= st.Evictions[0].Seq {
		t.Errorf("evictions = %+v", st.Evictions)
	}
	// Nobody else may take it: 0 and 1 are evicted.
	if res := d.result(d.pod("basic-dm-master-2", http.MethodPut, "/apis/v1alpha1/leader/1")); res.Result || res.Msg == "" {
		t.Errorf("evicting the only candidate: %+v", res)
	}
	// A restarted process campaigns again.
	d.restart("basic-dm-master-0")
	if res := d.result(d.pod("basic-dm-master-2", http.MethodPut, "/apis/v1alpha1/leader/1")); !res.Result {
		t.Errorf("evicting with a restarted candidate: %+v", res)
	}
	if st := d.state(); st.Leader != "basic-dm-master-0" || st.Masters[0].Evicted || st.Masters[0].StartedAt == nil {
		t.Errorf("after the restart: leader %q, masters %+v", st.Leader, st.Masters)
	}
}

func TestDMNoLeaderWithoutQuorum(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)
	d.stop("basic-dm-master-0")
	if st := d.state(); st.Leader != "basic-dm-master-1" || st.LeaderChanges[len(st.LeaderChanges)-1].Cause != api.LeaderCauseElection {
		t.Fatalf("after the leader stopped: %q %+v", st.Leader, st.LeaderChanges)
	}
	d.remove("basic-dm-master-1")
	st := d.state()
	if st.Leader != "" || st.LeaderChanges[len(st.LeaderChanges)-1].Cause != api.LeaderCauseQuorumLost || len(st.Masters) != 3 {
		t.Fatalf("with one of three alive: leader %q, changes %+v, masters %d", st.Leader, st.LeaderChanges, len(st.Masters))
	}
	all := d.members(d.master(http.MethodGet, "/apis/v1alpha1/members?leader=true&master=true"))
	if all.Members[0].Leader.Name != "" || all.Members[0].Leader.Msg == "" || len(all.Members[1].Master.Masters) != 3 ||
		all.Members[1].Master.Masters[0].Alive {
		t.Errorf("members without a leader = %+v", all)
	}
	d.run(ComponentDMMaster, 0, "uid-m0")
	if st := d.state(); st.Leader != "basic-dm-master-0" {
		t.Errorf("quorum back: leader %q", st.Leader)
	}
}

func TestDMDeleteMaster(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)
	if res := d.result(d.master(http.MethodDelete, "/apis/v1alpha1/members/master/basic-dm-master-0")); !res.Result {
		t.Fatalf("delete the leader: %+v", res)
	}
	st := d.state()
	if len(st.Masters) != 2 || st.Leader != "basic-dm-master-1" {
		t.Fatalf("after deleting 0: leader %q masters %+v", st.Leader, st.Masters)
	}
	if n := len(st.LeaderChanges); st.LeaderChanges[n-2].Cause != api.LeaderCauseMemberRemoved || st.LeaderChanges[n-1].To != "basic-dm-master-1" {
		t.Errorf("leader changes = %+v", st.LeaderChanges)
	}
	if len(st.Deletes) != 1 || st.Deletes[0] != (api.DMDelete{Seq: st.Deletes[0].Seq, At: t0, Kind: "master", Name: "basic-dm-master-0", Accepted: true}) {
		t.Errorf("deletes = %+v", st.Deletes)
	}
	if res := d.result(d.master(http.MethodDelete, "/apis/v1alpha1/members/master/basic-dm-master-0")); res.Result || !strings.Contains(res.Msg, "not exists") {
		t.Errorf("deleting twice: %+v", res)
	}
	// The pod still runs, and restarts, with the same UID: it stays deleted.
	d.restart("basic-dm-master-0")
	if len(d.state().Masters) != 2 {
		t.Error("a deleted member rejoined without a new pod")
	}
	d.run(ComponentDMMaster, 0, "uid-m0-new")
	if st := d.state(); len(st.Masters) != 3 || st.Masters[0].PodUID != "uid-m0-new" || st.Leader != "basic-dm-master-1" {
		t.Errorf("a recreated pod did not rejoin (or took the lead): %+v", st)
	}
}

func TestDMWorkersGoOfflineAndAreDeleted(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)
	res := d.result(d.master(http.MethodDelete, "/apis/v1alpha1/members/worker/basic-dm-worker-1"))
	if res.Result || !strings.Contains(res.Msg, "still online") {
		t.Errorf("deleting a running worker: %+v", res)
	}
	d.remove("basic-dm-worker-1")
	if st := d.state(); st.Workers[1].Stage != "offline" {
		t.Fatalf("a worker whose pod is gone = %+v", st.Workers[1])
	}
	if res := d.result(d.master(http.MethodDelete, "/apis/v1alpha1/members/worker/basic-dm-worker-1")); !res.Result {
		t.Fatalf("deleting an offline worker: %+v", res)
	}
	if st := d.state(); len(st.Workers) != 1 || st.Deletes[1].Kind != "worker" || !st.Deletes[1].Accepted {
		t.Fatalf("after the delete: %+v", st)
	}
	d.run(ComponentDMWorker, 1, "uid-w1-new")
	if st := d.state(); len(st.Workers) != 2 || st.Workers[1].Stage != "free" {
		t.Errorf("a deleted worker running again = %+v", st.Workers)
	}
	if res := d.result(d.master(http.MethodDelete, "/apis/v1alpha1/members/source/x")); res.Result {
		t.Errorf("an unknown member type was deleted: %+v", res)
	}
}

func TestDMWorkersRegisterOnlyWithALeader(t *testing.T) {
	t.Parallel()
	d := newDMHarness(t)
	d.run(ComponentDMWorker, 0, "uid-w0")
	if st := d.state(); len(st.Workers) != 0 {
		t.Fatalf("a worker registered without dm-master: %+v", st.Workers)
	}
	d.run(ComponentDMMaster, 0, "uid-m0")
	if st := d.state(); len(st.Workers) != 1 || st.Leader != "basic-dm-master-0" {
		t.Errorf("after dm-master started: %+v", st)
	}
}

func TestDMFaultsAndUnhealthyMasters(t *testing.T) {
	t.Parallel()
	d := threeMasters(t)
	r := d.admin(http.MethodPost, "/dmclusters/default/basic/faults", `{"kind":"error","status":503,"body":"injected","pathPrefix":"/apis","times":1}`)
	wantStatus(t, r, http.StatusCreated)
	if r := d.master(http.MethodGet, "/apis/v1alpha1/members"); r.status != http.StatusServiceUnavailable || r.body != "injected" {
		t.Errorf("faulted request: %d %q", r.status, r.body)
	}
	wantStatus(t, d.master(http.MethodGet, "/apis/v1alpha1/members"), http.StatusOK)
	wantStatus(t, d.admin(http.MethodPost, "/dmclusters/default/basic/faults", `{"kind":"error","status":503,"component":"pd"}`), http.StatusBadRequest)

	wantStatus(t, d.admin(http.MethodPut, "/dmclusters/default/basic/masters/basic-dm-master-0/unhealthy", ""), http.StatusNoContent)
	st := d.state()
	if st.Leader != "basic-dm-master-1" || st.Masters[0].Alive || !st.Masters[0].ForcedUnhealthy {
		t.Errorf("after marking the leader unhealthy: %+v", st)
	}
	wantStatus(t, d.admin(http.MethodPut, "/dmclusters/default/basic/masters/basic-dm-worker-0/unhealthy", ""), http.StatusNotFound)
	wantStatus(t, d.admin(http.MethodGet, "/dmclusters/default/nope", ""), http.StatusNotFound)
	sums := decode[[]api.DMClusterSummary](t, d.admin(http.MethodGet, "/dmclusters", ""))
	if len(sums) != 1 || sums[0].Masters != 3 || sums[0].Workers != 2 || sums[0].Leader != "basic-dm-master-1" {
		t.Errorf("summaries = %+v", sums)
	}
}
