// Package simulator simulates the PD, TiKV, TiFlash, TiDB, TiCDC, TiProxy and Pump HTTP APIs the operator
// uses, for TiDB clusters whose pods run on a control plane without real containers (kube-apiserver +
// KWOK). Pods are the source of truth: every Running PD pod is a PD member, every Running TiKV or TiFlash
// pod a store, every TiDB pod a server, every Running TiCDC pod a capture, every Running TiProxy pod a
// proxy, every Running Pump pod a node of the binlog registry; their readiness drives health, and a state
// machine on an injectable clock moves stores through Disconnected, Down, Offline and Tombstone, leaders
// between stores, TiCDC tables between captures and Pump nodes offline. DMClusters' dm-master API is
// simulated apart, from their dm-master and dm-worker pods (dm_cluster.go). Clients reach it as an HTTP proxy
// (HTTP_PROXY), through extra listen addresses, and tests drive faults through the admin API under /sim/v1.
//
// The package shares only JSON types (pkg/pdapi) with the operator, never its logic, so that a bug in the
// operator cannot hide behind the same bug in the simulator. See docs/simulator.md.
package simulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// Config configures a Simulator.
type Config struct {
	// Kube reads Pods and PVCs (required).
	Kube kubernetes.Interface
	// Dynamic reads TidbClusters when the CRD is served; nil disables the TidbCluster watch.
	Dynamic dynamic.Interface
	// Namespace limits the watch; empty watches all namespaces.
	Namespace string
	// Listen is the main address: proxy, admin API and Host-dispatched requests (default 127.0.0.1:0).
	Listen string
	// ExtraListen are more addresses that dispatch plain requests on their Host header.
	ExtraListen []string
	// Options of the simulated clusters.
	Options Options
	// Clock drives the state machine and injected latency (default: the real clock).
	Clock clock.WithTicker
	// TickInterval is how often timers advance without any request (default 200ms).
	TickInterval time.Duration
	// MySQLBackend is a real MySQL-protocol server (host:port) that stands in for every TiDB's MySQL
	// port: a SOCKS5 proxy on SOCKSListen forwards connections for TiDB Services and pods to it, and
	// a cluster's bootstrap SQL (initialize-sql-file) runs on it once (mysql_front.go). Empty: off.
	MySQLBackend string
	// SOCKSListen is the SOCKS5 proxy's address (default 127.0.0.1:0), used with MySQLBackend.
	SOCKSListen string
	// TLS, when set, is the CA with which the proxy terminates HTTPS (CONNECT) to simulated endpoints and
	// checks client certificates (tls.go); nil: CONNECT is refused and only plain HTTP is simulated.
	TLS *TLSAuthority
}

// Simulator is a running simulator: a Registry fed by a Watcher and served by a Server on listeners.
type Simulator struct {
	cfg       Config
	reg       *Registry
	server    *Server
	watcher   *Watcher
	listeners []net.Listener
	mysql     *mysqlFront
	log       klog.Logger
}

// New builds a Simulator and binds its listeners, so URL is known before Start; it errors when the
// configuration is invalid or an address cannot be bound (listeners already bound are closed).
func New(cfg Config, log klog.Logger) (*Simulator, error) {
	if cfg.Kube == nil {
		return nil, errors.New("simulator: a Kubernetes client is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.TickInterval <= 0 {
		cfg.TickInterval = 200 * time.Millisecond
	}
	reg, err := NewRegistry(cfg.Options, cfg.Clock, log)
	if err != nil {
		return nil, fmt.Errorf("simulator options: %w", err)
	}
	var tcs *tidbClusterWatch
	if cfg.Dynamic != nil {
		tcs = newTidbClusterWatch(cfg.Dynamic, cfg.Kube.Discovery(), cfg.Namespace, log)
	}
	s := &Simulator{
		cfg: cfg, reg: reg, log: log,
		server:  NewServer(reg, cfg.Clock, log),
		watcher: NewWatcher(reg, cfg.Kube, cfg.Namespace, tcs, log),
	}
	s.server.SetTLSAuthority(cfg.TLS)
	s.server.secrets = newClusterSecrets(cfg.Kube, cfg.Namespace, log)
	for _, addr := range append([]string{cfg.Listen}, cfg.ExtraListen...) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("simulator: listen on %s: %w", addr, err)
		}
		s.listeners = append(s.listeners, ln)
	}
	if cfg.MySQLBackend != "" {
		if cfg.SOCKSListen == "" {
			cfg.SOCKSListen = "127.0.0.1:0"
		}
		if s.mysql, err = newMySQLFront(cfg.Kube, cfg.Namespace, cfg.SOCKSListen, cfg.MySQLBackend, log); err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("simulator: %w", err)
		}
	}
	return s, nil
}

// SOCKSAddr is the SOCKS5 proxy's address (the ALL_PROXY value is socks5://<it>), or "" without a
// MySQLBackend.
func (s *Simulator) SOCKSAddr() string {
	if s.mysql == nil {
		return ""
	}
	return s.mysql.socks.Addr()
}

// BootstrapSQLRan reports whether TidbCluster namespace/name's bootstrap SQL has run on the MySQL
// backend (always false without one).
func (s *Simulator) BootstrapSQLRan(namespace, name string) bool {
	return s.mysql != nil && s.mysql.bootstrap.Ran(namespace, name)
}

// URL is the main listener's address as an http:// URL: the HTTP_PROXY value and the admin API base.
func (s *Simulator) URL() string { return "http://" + s.listeners[0].Addr().String() }

// Addrs returns the bound address of every listener, the main one first (useful with ":0" ports).
func (s *Simulator) Addrs() []string {
	out := make([]string, 0, len(s.listeners))
	for _, ln := range s.listeners {
		out = append(out, ln.Addr().String())
	}
	return out
}

// Registry returns the simulated clusters, for in-process tests.
func (s *Simulator) Registry() *Registry { return s.reg }

// Handler returns the HTTP handler served on every listener.
func (s *Simulator) Handler() http.Handler { return s.server }

// Start syncs the informers, then serves and ticks in the background until ctx ends; it errors when the
// caches cannot sync (ctx ended first). Serve errors are logged; Run reports them.
func (s *Simulator) Start(ctx context.Context) error {
	_, err := s.start(ctx)
	return err
}

// Run is Start followed by waiting for ctx to end; it returns the first listener error, if any.
func (s *Simulator) Run(ctx context.Context) error {
	errs, err := s.start(ctx)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

func (s *Simulator) start(ctx context.Context) (<-chan error, error) {
	if err := s.watcher.Start(ctx); err != nil {
		s.closeListeners()
		return nil, fmt.Errorf("simulator: %w", err)
	}
	s.server.secrets.start(ctx)
	if s.mysql != nil {
		if err := s.mysql.start(ctx); err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("simulator: %w", err)
		}
	}
	go s.tick(ctx)
	errs := make(chan error, len(s.listeners))
	for _, ln := range s.listeners {
		srv := &http.Server{Handler: s.server, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			<-ctx.Done()
			shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdownCtx)
		}()
		go func() {
			s.log.Info("serving", "address", ln.Addr().String())
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error(err, "serve", "address", ln.Addr().String())
				errs <- fmt.Errorf("simulator: serve %s: %w", ln.Addr(), err)
			}
		}()
	}
	return errs, nil
}

// tick advances every cluster on the clock's ticker, so that timers fire without requests.
func (s *Simulator) tick(ctx context.Context) {
	ticker := s.cfg.Clock.NewTicker(s.cfg.TickInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			s.reg.Tick()
		}
	}
}

func (s *Simulator) closeListeners() {
	for _, ln := range s.listeners {
		_ = ln.Close()
	}
}
