package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/metrics"
)

// readiness tracks what /healthz and /readyz report.
type readiness struct {
	synced  atomic.Bool
	mu      sync.Mutex
	elector *leaderelection.LeaderElector
}

func (r *readiness) setSynced() { r.synced.Store(true) }

// ready is true for the leader once its caches synced, and for a standby
// replica waiting for the Lease: a standby is healthy and ready to take
// over, and rollouts of the Deployment must not wait on it.
func (r *readiness) ready() (bool, string) {
	if r.synced.Load() {
		return true, ""
	}
	r.mu.Lock()
	e := r.elector
	r.mu.Unlock()
	if e != nil && !e.IsLeader() {
		return true, ""
	}
	return false, "informer caches are not synced yet"
}

func (r *readiness) setElector(e *leaderelection.LeaderElector) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.elector = e
}

// healthy fails only when this process leads but has stopped renewing its
// Lease for longer than the lease allows (a wedged leader).
func (r *readiness) healthy() error {
	r.mu.Lock()
	e := r.elector
	r.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.Check(2 * time.Second)
}

type servers struct {
	list []*http.Server
	wg   sync.WaitGroup
}

// startServers binds the metrics and health addresses (one server when they
// are equal) and serves them in the background. Binding errors are returned
// at once, so a port in use fails the start with a clear message.
func startServers(ctx context.Context, opts *Options, m *metrics.Metrics, state *readiness) (*servers, error) {
	health := http.NewServeMux()
	health.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := state.healthy(); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	health.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ok, why := state.ready(); !ok {
			http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux := map[string]*http.ServeMux{opts.HealthAddr: health}
	metricsMux := mux[opts.MetricsAddr]
	if metricsMux == nil {
		metricsMux = http.NewServeMux()
		mux[opts.MetricsAddr] = metricsMux
	}
	metricsMux.Handle("/metrics", m.Handler())
	if opts.Pprof {
		metricsMux.HandleFunc("/debug/pprof/", pprof.Index)
		metricsMux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		metricsMux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	}

	s := &servers{}
	for addr, handler := range mux {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			s.shutdown(time.Second)
			return nil, fmt.Errorf("listen on %s (change --metrics-addr or --health-addr): %w", addr, err)
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		s.list = append(s.list, srv)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			klog.FromContext(ctx).Info("serving", "addr", ln.Addr().String())
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				klog.FromContext(ctx).Error(err, "HTTP server failed", "addr", ln.Addr().String())
			}
		}()
	}
	return s, nil
}

// shutdown stops the servers, waiting up to grace for requests in flight.
func (s *servers) shutdown(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, srv := range s.list {
		_ = srv.Shutdown(ctx)
	}
	s.wg.Wait()
}
