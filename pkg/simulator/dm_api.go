package simulator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// dm-master's HTTP API on port 8261 (its OpenAPI v1alpha1 gateway, grpc-gateway JSON with defaults
// emitted and uint64 fields as strings). The routes the operator uses are simulated:
//   - `GET /apis/v1alpha1/members[?leader=true][&master=true][&worker=true]`: the lists asked for, in the
//     order leader, master, worker (all three when none is asked), each one element of `members`;
//   - `PUT /apis/v1alpha1/leader/{1|0}`: evict (or un-evict) the leader role of the member serving the
//     request, so it is sent to that pod's peer address;
//   - `DELETE /apis/v1alpha1/members/{master|worker}/{name}`.
//
// Every answer is 200 with `{"result": …, "msg": …}`: dm-master reports refusals in result and msg.

// dmTarget is a parsed dm-master address.
type dmTarget struct {
	key ClusterKey
	// pod is the pod of a per-pod address, or the pod chosen to serve the Service.
	pod      string
	service  string
	hostport string
}

// peer reports whether the address goes through the headless Service, which publishes not-Ready pods.
func (t dmTarget) peer() bool { return strings.HasSuffix(t.service, "-peer") }

// parseDMTarget resolves hostport to a dm-master address: `<dc>-dm-master.<ns>[.svc…]:8261`,
// `<dc>-dm-master-peer.<ns>[.svc…]:8261` or `<pod>.<dc>-dm-master-peer.<ns>[.svc…]:8261`; false for any
// other address.
func parseDMTarget(hostport, defaultPort string) (dmTarget, bool) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
	}
	if port != dmMasterPort {
		return dmTarget{}, false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	pod, svc, ns, err := splitServiceHost(host)
	if err != nil {
		return dmTarget{}, false
	}
	dc, ok := strings.CutSuffix(strings.TrimSuffix(svc, "-peer"), "-"+string(ComponentDMMaster))
	if !ok || dc == "" || (pod != "" && !strings.HasSuffix(svc, "-peer")) {
		return dmTarget{}, false
	}
	return dmTarget{key: ClusterKey{Namespace: ns, Name: dc}, pod: pod, service: svc, hostport: net.JoinHostPort(host, port)}, true
}

// resolve checks that the address accepts connections and picks the pod behind a Service: the client
// Service routes to Ready running pods, the headless one to running pods; a pod address needs its pod
// running. It returns the reason when it does not.
func (d *dmCluster) resolve(t dmTarget) (dmTarget, string) {
	if t.pod != "" {
		if p, ok := d.pods[t.pod]; !ok || p.Component != ComponentDMMaster || !p.Running {
			return t, "connection refused"
		}
		return t, ""
	}
	// Prefer the leader, as a client would end up there anyway: dm-master forwards to its leader.
	if p, ok := d.pods[d.leader]; ok && p.Running && (p.Ready || t.peer()) {
		t.pod = p.Name
		return t, ""
	}
	for _, p := range d.sortedPods(ComponentDMMaster) {
		if p.Running && (p.Ready || t.peer()) {
			t.pod = p.Name
			return t, ""
		}
	}
	return t, "no endpoints available for service " + t.service
}

// serveDM applies the DMCluster's faults and serves one dm-master API request under the registry lock,
// buffering the answer.
func (s *Server) serveDM(w http.ResponseWriter, r *http.Request, t dmTarget, viaProxy bool) {
	var act faultAction
	tlsOnly, admitted := s.dmTLSOnly(t.key), true
	if !s.reg.withDM(t.key, false, func(d *dmCluster) {
		d.tlsOnly = tlsOnly
		if admitted = d.admit(r); admitted {
			d.faults, act = applyFaults(d.faults, ComponentDMMaster, r)
		}
	}) {
		connectFailure(w, viaProxy, t.hostport, fmt.Sprintf("no simulated DMCluster %s (no pod or PVC of it is known)", t.key))
		return
	}
	if s.answeredBefore(w, r, admitted, act) {
		return
	}
	buf, failure := newBufferedResponse(), ""
	if !s.reg.withDM(t.key, false, func(d *dmCluster) {
		resolved, why := d.resolve(t)
		if failure = why; why != "" {
			return
		}
		st := &dmReqState{d: d, t: resolved, now: s.reg.clock.Now()}
		s.dmMux().ServeHTTP(buf, r.WithContext(context.WithValue(r.Context(), dmReqStateKey{}, st)))
	}) {
		failure = fmt.Sprintf("no simulated DMCluster %s", t.key)
	}
	if failure != "" {
		connectFailure(w, viaProxy, t.hostport, failure)
		return
	}
	buf.flush(w)
}

// dmTLSOnly reports whether DMCluster key speaks TLS only: its dm-master server certificate Secret
// `<dc>-dm-master-cluster-secret` exists, which the user creates for spec.tlsCluster.enabled (the
// simulator does not read DMCluster objects).
func (s *Server) dmTLSOnly(key ClusterKey) bool {
	return s.secrets != nil && s.secrets.exists(key.Namespace, dmServerSecret(key.Name))
}

// dmServerSecret is the Secret of dm-master's server certificate.
func dmServerSecret(dc string) string {
	return dc + "-" + string(ComponentDMMaster) + "-cluster-secret"
}

// admit counts r and reports whether dm-master accepts it: a TLS-only dm-master refuses plain HTTP.
func (d *dmCluster) admit(r *http.Request) bool {
	switch {
	case r.TLS != nil:
		d.tlsRequests++
	case d.tlsOnly:
		d.plainRefused++
		return false
	default:
		d.plainRequests++
	}
	return true
}

// scheme is the scheme of the advertised URLs.
func (d *dmCluster) scheme() string {
	if d.tlsOnly {
		return "https"
	}
	return "http"
}

// dmReqState is what a dm-master handler sees: the DMCluster (locked) and the pod serving.
type dmReqState struct {
	d   *dmCluster
	t   dmTarget
	now time.Time
}

type dmReqStateKey struct{}

func dmStateOf(r *http.Request) *dmReqState {
	st, _ := r.Context().Value(dmReqStateKey{}).(*dmReqState)
	return st
}

// dmMux returns the dm-master routes, built on first use.
func (s *Server) dmMux() http.Handler {
	s.dmOnce.Do(func() {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /apis/v1alpha1/members", handleDMMembers)
		mux.HandleFunc("PUT /apis/v1alpha1/leader/{op}", handleDMLeader)
		mux.HandleFunc("DELETE /apis/v1alpha1/members/{kind}/{name}", handleDMDelete)
		mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusNotFound, dmGatewayError{Error: "Not Found", Code: 5, Message: "Not Found"})
		})
		s.dmRoutes = mux
	})
	return s.dmRoutes
}

// dmGatewayError is grpc-gateway's error body.
type dmGatewayError struct {
	Error   string `json:"error"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// dmResult is the body of the write calls.
type dmResult struct {
	Result bool   `json:"result"`
	Msg    string `json:"msg"`
}

// dmListMembers is the body of `GET members` (pb.ListMemberResponse).
type dmListMembers struct {
	Result  bool           `json:"result"`
	Msg     string         `json:"msg"`
	Members []dmMemberList `json:"members"`
}

// dmMemberList is one element of members (pb.Members: a oneof of leader, master, worker).
type dmMemberList struct {
	Leader *dmLeaderJSON     `json:"leader,omitempty"`
	Master *dmMasterListJSON `json:"master,omitempty"`
	Worker *dmWorkerListJSON `json:"worker,omitempty"`
}

type dmLeaderJSON struct {
	Msg  string `json:"msg"`
	Name string `json:"name"`
	Addr string `json:"addr"`
}

type dmMasterListJSON struct {
	Msg     string         `json:"msg"`
	Masters []dmMasterJSON `json:"masters"`
}

type dmMasterJSON struct {
	Name       string   `json:"name"`
	MemberID   string   `json:"memberID"`
	Alive      bool     `json:"alive"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"`
}

type dmWorkerListJSON struct {
	Msg     string         `json:"msg"`
	Workers []dmWorkerJSON `json:"workers"`
}

type dmWorkerJSON struct {
	Name   string `json:"name"`
	Addr   string `json:"addr"`
	Stage  string `json:"stage"`
	Source string `json:"source"`
}

func handleDMMembers(w http.ResponseWriter, r *http.Request) {
	st := dmStateOf(r)
	q := r.URL.Query()
	flag := func(name string) bool { v, _ := strconv.ParseBool(q.Get(name)); return v }
	leader, master, worker := flag("leader"), flag("master"), flag("worker")
	if !leader && !master && !worker {
		leader, master, worker = true, true, true
	}
	out := dmListMembers{Result: true, Members: []dmMemberList{}}
	if leader {
		out.Members = append(out.Members, dmMemberList{Leader: st.d.leaderJSON()})
	}
	if master {
		out.Members = append(out.Members, dmMemberList{Master: st.d.mastersJSON()})
	}
	if worker {
		out.Members = append(out.Members, dmMemberList{Worker: st.d.workersJSON()})
	}
	writeJSON(w, http.StatusOK, out)
}

func (d *dmCluster) leaderJSON() *dmLeaderJSON {
	if d.leader == "" {
		return &dmLeaderJSON{Msg: "no leader"}
	}
	return &dmLeaderJSON{Name: d.leader, Addr: d.peerHost(d.leader) + ":" + dmMasterPort}
}

func (d *dmCluster) mastersJSON() *dmMasterListJSON {
	out := &dmMasterListJSON{Masters: []dmMasterJSON{}}
	for _, m := range d.sortedMasters() {
		host := d.peerHost(m.name)
		out.Masters = append(out.Masters, dmMasterJSON{
			Name: m.name, MemberID: strconv.FormatUint(m.id, 10), Alive: d.alive(m),
			PeerURLs:   []string{d.scheme() + "://" + host + ":" + dmMasterPeerPort},
			ClientURLs: []string{d.scheme() + "://" + host + ":" + dmMasterPort},
		})
	}
	return out
}

func (d *dmCluster) workersJSON() *dmWorkerListJSON {
	out := &dmWorkerListJSON{Workers: []dmWorkerJSON{}}
	for _, wk := range d.sortedWorkers() {
		out.Workers = append(out.Workers, dmWorkerJSON{Name: wk.name, Addr: wk.addr, Stage: wk.stage()})
	}
	return out
}

// stage is what dm-master reports of the worker.
func (w *dmWorker) stage() string {
	if w.offline {
		return "offline"
	}
	return "free"
}

// peerHost is "<pod>.<dc>-dm-master-peer", the domain the start script advertises (no namespace).
func (d *dmCluster) peerHost(pod string) string {
	return pod + "." + d.key.Name + "-" + string(ComponentDMMaster) + "-peer"
}

func handleDMLeader(w http.ResponseWriter, r *http.Request) {
	st := dmStateOf(r)
	switch r.PathValue("op") {
	case "1":
		ok, msg := st.d.evict(st.now, st.t.pod)
		writeJSON(w, http.StatusOK, dmResult{Result: ok, Msg: msg})
	case "0":
		st.d.unevict(st.now, st.t.pod)
		writeJSON(w, http.StatusOK, dmResult{Result: true})
	default:
		writeJSON(w, http.StatusOK, dmResult{Msg: "invalid leader operation " + r.PathValue("op")})
	}
}

func handleDMDelete(w http.ResponseWriter, r *http.Request) {
	st := dmStateOf(r)
	ok, msg := st.d.deleteMember(st.now, r.PathValue("kind"), r.PathValue("name"))
	writeJSON(w, http.StatusOK, dmResult{Result: ok, Msg: msg})
}
