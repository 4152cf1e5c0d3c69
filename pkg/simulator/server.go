package simulator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubetidb/tidb-operator/pkg/simulator/api"
)

// Server answers the simulated PD, TiKV, TiFlash, TiDB, TiCDC, TiProxy and Pump HTTP APIs and the admin API. It is an http.Handler for:
//   - proxy requests in absolute form (`GET http://basic-pd.ns:2379/pd/api/v1/members`), dispatched on
//     the URL's host and port, which is how clients with HTTP_PROXY pointing here reach it;
//   - plain requests whose Host header is a simulated address (extra --listen addresses, curl --resolve);
//   - plain requests to `/sim/v1/...`: the admin API.
//
// CONNECT (HTTPS through the proxy) is served with the TLSAuthority set by SetTLSAuthority (tls.go), and
// answered 501 without one. The endpoints of a cluster whose TidbCluster has spec.tlsCluster.enabled
// refuse plain HTTP, as TLS-only servers do.
type Server struct {
	reg   *Registry
	clock clock.Clock
	log   klog.Logger
	pd    *http.ServeMux
	tidb  *http.ServeMux
	tikv  *http.ServeMux
	// tiflash serves the TiFlash proxy status port.
	tiflash *http.ServeMux
	// ticdc serves TiCDC's port 8301, tiproxy TiProxy's API port 3080.
	ticdc   http.Handler
	tiproxy http.Handler
	// pdms serves the PD micro-services' port 2379.
	pdms http.Handler
	// pump serves Pump's port 8250.
	pump  http.Handler
	admin *http.ServeMux
	// tls terminates CONNECT tunnels; nil: TLS is not simulated.
	tls *TLSAuthority
	// secrets are the clusters' own server certificates (tls_secrets.go); nil: none are read.
	secrets *clusterSecrets
	// dmRoutes serves dm-master's port 8261 (dm_api.go), built once by dmMux.
	dmOnce   sync.Once
	dmRoutes http.Handler
}

// NewServer returns a Server over reg; clk drives injected latency, so tests can step it.
func NewServer(reg *Registry, clk clock.Clock, log klog.Logger) *Server {
	s := &Server{reg: reg, clock: clk, log: log}
	s.pd = s.pdRoutes()
	s.tidb = s.tidbRoutes()
	s.tikv = s.tikvRoutes()
	s.tiflash = s.tiflashRoutes()
	s.ticdc = s.ticdcRoutes()
	s.tiproxy = s.tiproxyRoutes()
	s.pump = s.pumpRoutes()
	s.pdms = s.pdmsRoutes()
	s.admin = s.adminRoutes()
	return s
}

// reqState is what a simulated handler sees: the cluster (locked) and the endpoint addressed.
type reqState struct {
	c   *Cluster
	t   target
	now time.Time
}

type reqStateKey struct{}

func stateOf(r *http.Request) *reqState {
	st, _ := r.Context().Value(reqStateKey{}).(*reqState)
	return st
}

// ServeHTTP dispatches one request; see Server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		s.serveConnect(w, r)
		return
	}
	viaProxy := r.URL.IsAbs()
	host := r.Host
	if viaProxy {
		host = r.URL.Host
		if r.URL.Scheme != "http" {
			writeText(w, http.StatusNotImplemented, "simulator: send https:// requests through the proxy with CONNECT\n")
			return
		}
	}
	s.dispatch(w, r, host, viaProxy)
}

// dispatch serves one request to host (host:port), plain or inside a TLS tunnel.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, host string, viaProxy bool) {
	if viaProxy && s.servePodIP(w, r, host) {
		return
	}
	if t, ok := parseDMTarget(host, localPort(r)); ok {
		s.serveDM(w, r, t, viaProxy)
		return
	}
	t, err := parseTarget(host, localPort(r))
	if err != nil {
		s.serveOther(w, r, viaProxy, err)
		return
	}
	s.serveTarget(w, r, s.reg.route(t), viaProxy)
}

// serveOther handles requests that name no simulated endpoint: the admin API when addressed directly,
// otherwise an error that says what the simulator does answer.
func (s *Server) serveOther(w http.ResponseWriter, r *http.Request, viaProxy bool, err error) {
	switch {
	case !viaProxy && (r.URL.Path == api.PathPrefix || strings.HasPrefix(r.URL.Path, api.PathPrefix+"/")):
		s.admin.ServeHTTP(w, r)
	case viaProxy:
		writeText(w, http.StatusBadGateway, fmt.Sprintf("simulator: cannot resolve %v\n", err))
	default:
		writeJSON(w, http.StatusNotFound, api.Error{Error: fmt.Sprintf(
			"%v; send simulated requests through the proxy or with a simulated Host header, admin requests to %s",
			err, api.PathPrefix)})
	}
}

// serveTarget applies the cluster's faults, checks the endpoint is reachable and runs the component's
// handler under the registry lock, buffering the answer.
func (s *Server) serveTarget(w http.ResponseWriter, r *http.Request, t target, viaProxy bool) {
	var act faultAction
	admitted := true
	if !s.reg.withCluster(t.key, false, func(c *Cluster) {
		if admitted = c.admitScheme(t.component(), r); admitted {
			act = c.matchFaults(t.component(), r)
		}
	}) {
		connectFailure(w, viaProxy, t.hostport, fmt.Sprintf("no simulated TiDB cluster %s (no pod, PVC or TidbCluster of it is known)", t.key))
		return
	}
	if s.answeredBefore(w, r, admitted, act) {
		return
	}
	buf, failure := newBufferedResponse(), ""
	found := s.reg.withCluster(t.key, false, func(c *Cluster) {
		resolved, why := c.resolve(t)
		if failure = why; why != "" {
			return
		}
		st := &reqState{c: c, t: resolved, now: s.reg.clock.Now()}
		s.muxFor(resolved).ServeHTTP(buf, r.WithContext(context.WithValue(r.Context(), reqStateKey{}, st)))
	})
	if !found {
		failure = fmt.Sprintf("no simulated TiDB cluster %s", t.key)
	}
	if failure != "" {
		connectFailure(w, viaProxy, t.hostport, failure)
		return
	}
	buf.flush(w)
}

func (s *Server) muxFor(t target) http.Handler {
	switch t.component() {
	case ComponentTiDB:
		return s.tidb
	case ComponentTiKV:
		return s.tikv
	case ComponentTiFlash:
		return s.tiflash
	case ComponentTiCDC:
		return s.ticdc
	case ComponentTiProxy:
		return s.tiproxy
	case ComponentPump:
		return s.pump
	case ComponentTSO, ComponentScheduling:
		return s.pdms
	}
	return s.pd
}

// resolve checks that the addressed endpoint accepts connections, as the Kubernetes Service or pod would,
// and picks the pod behind a Service address. It returns the reason when it does not.
func (c *Cluster) resolve(t target) (target, string) {
	refused := "connection refused"
	switch t.kind {
	case targetPDService, targetPDMember:
		if c.pdUnreachable {
			return t, refused + " (PD made unreachable by the simulator's admin API)"
		}
		if t.kind == targetPDMember {
			m, ok := c.members[t.pod]
			if !ok || !c.memberRunning(m) {
				return t, refused
			}
			return t, ""
		}
		return c.pickPD(t)
	case targetTiKVPod, targetTiFlashPod, targetTiCDCPod, targetTiProxyPod:
		if p, ok := c.podFor(t); !ok || p.Component != t.component() || !p.Running {
			return t, refused
		}
	case targetPDMSPod:
		if p, ok := c.podFor(t); !ok || p.Component != t.component() || !p.Running {
			return t, refused
		}
	case targetPDMSService:
		for _, p := range c.podsFor(t) {
			if p.Running && (p.Ready || t.peerService()) {
				t.pod = p.Name
				return t, ""
			}
		}
		return t, "no endpoints available for service " + t.service
	case targetTiCDCService, targetTiProxyService:
		// Both TiProxy Services and TiCDC's headless one publish not-Ready addresses.
		for _, p := range c.podsFor(t) {
			if p.Running {
				t.pod = p.Name
				return t, ""
			}
		}
		return t, "no endpoints available for service " + t.service
	case targetPumpPod:
		// A Pump pod whose process exited (offline, paused) or has not started (no PD) listens on nothing.
		if p, ok := c.podFor(t); !ok || p.Component != ComponentPump || !p.Running || c.servingPump(t.pod) == nil {
			return t, refused
		}
	case targetPumpService:
		return c.pickPump(t)
	case targetTiDBPod:
		if p, ok := c.podFor(t); !ok || p.Component != ComponentTiDB || !p.Running || !p.Ready {
			return t, refused
		}
	case targetTiDBService:
		for _, p := range c.podsFor(t) {
			if p.Running && (p.Ready || t.peerService()) {
				t.pod = p.Name
				return t, ""
			}
		}
		return t, "no endpoints available for service " + t.service
	}
	return t, ""
}

// pickPD chooses the member that serves a PD Service address: the leader when its pod backs the Service,
// else the first member that does. The client Service routes to Ready pods only, the headless peer Service
// to every running pod.
func (c *Cluster) pickPD(t target) (target, string) {
	backs := func(m *pdMember) bool {
		p, ok := c.podWithIdentity(m.ident)
		return ok && p.Running && (p.Ready || t.peerService())
	}
	if m, ok := c.members[c.leader]; ok && backs(m) {
		t.pod = m.name
		return t, ""
	}
	for _, m := range c.sortedMembers() {
		if backs(m) {
			t.pod = m.name
			return t, ""
		}
	}
	return t, "no endpoints available for service " + t.service
}

// pickPump chooses the pump that serves the headless `<tc>-pump` Service address: a serving pump that is
// online by its own account, else any serving one (a client picks among the Service's addresses; a pump
// being closed answers /status with an error, so tests get the useful one). Without a Running Pump pod the
// Service has no endpoints; with only pumps that do not serve, the connection is refused.
func (c *Cluster) pickPump(t target) (target, string) {
	running, fallback := false, ""
	for _, p := range c.podsFor(t) {
		if !p.Running {
			continue
		}
		running = true
		n := c.servingPump(p.Name)
		switch {
		case n == nil:
		case n.proc.state == pumpOnline:
			t.pod = p.Name
			return t, ""
		case fallback == "":
			fallback = p.Name
		}
	}
	switch {
	case fallback != "":
		t.pod = fallback
		return t, ""
	case running:
		return t, "connection refused"
	}
	return t, "no endpoints available for service " + t.service
}

// localPort is the port the request arrived on, the default when the Host header names none.
func localPort(r *http.Request) string {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(addr.String()); err == nil {
			return port
		}
	}
	return "80"
}

// answeredBefore answers a request a fault or the transport settles before
// any cluster state is read: plain HTTP to a TLS-only cluster (400), a
// fault's delay (nothing more when the client gives up meanwhile), a
// dropped connection or a fault's status. It reports whether w was answered.
func (s *Server) answeredBefore(w http.ResponseWriter, r *http.Request, admitted bool, act faultAction) bool {
	if !admitted {
		writeText(w, http.StatusBadRequest, "Client sent an HTTP request to an HTTPS server.\n")
		return true
	}
	if act.delay > 0 {
		select {
		case <-s.clock.After(act.delay):
		case <-r.Context().Done():
			return true
		}
	}
	switch {
	case act.drop:
		dropConnection(w)
		return true
	case act.status != 0:
		writeText(w, act.status, act.body)
		return true
	}
	return false
}
