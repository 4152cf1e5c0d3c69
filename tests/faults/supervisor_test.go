//go:build integration

package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/kubetidb/tidb-operator/cmd/controller-manager/app"
	"github.com/kubetidb/tidb-operator/tests/framework"
	"github.com/kubetidb/tidb-operator/tests/operator"
)

// maxOperatorExits bounds the restarts of a supervised operator: more exits than this in one
// scenario is a crash loop, which fails the scenario instead of being restarted for ever.
const maxOperatorExits = 5

// leaseLost is what app.Run returns when the operator lost its leader-election Lease.
const leaseLost = "lost the leader-election Lease"

// supervisedOperator runs in-process operators one after the other, the way a Deployment restarts
// its pod. app.Run returns an error when the Lease is lost — which it is whenever kube-apiserver (or
// etcd behind it) stays away longer than the renew deadline — by design, so that the process exits
// and comes back as a follower. A scenario that restarts the control plane therefore needs someone
// to start the next operator, as the kubelet would; operator.StartManager fails the test instead.
// Every exit is recorded; the scenario judges them (exits).
type supervisedOperator struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	exits []error
}

// startSupervisedOperator starts the first operator; the supervisor stops at the scenario's cleanup.
func (s *sc) startSupervisedOperator() *supervisedOperator {
	opts, err := s.managerOptions()
	if err != nil {
		s.t.Fatal(err)
	}
	// Every run of the operator authenticates as the chart's ServiceAccount (tests/operator).
	s.chart = operator.ChartCredentials(s.t, opts.Kubeconfig, opts.Controller.Namespace,
		opts.Controller.ClusterScoped || operator.ClusterScopedRBAC(), operator.Chart{})
	ctx, cancel := context.WithCancel(context.Background())
	p := &supervisedOperator{cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx, s)
	s.t.Cleanup(p.stop)
	return p
}

func (p *supervisedOperator) loop(ctx context.Context, s *sc) {
	defer close(p.done)
	for n := 1; ; n++ {
		opts, err := s.managerOptions()
		if err == nil {
			s.t.Logf("supervisor: operator %d starting (health %s)", n, opts.HealthAddr)
			err = app.Run(ctx, opts)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("app.Run returned nil before it was stopped")
		}
		p.mu.Lock()
		p.exits = append(p.exits, err)
		exits := len(p.exits)
		p.mu.Unlock()
		if exits >= maxOperatorExits {
			s.t.Logf("supervisor: operator %d exited: %v; %d exits, not restarting (crash loop)", n, err, exits)
			return
		}
		s.t.Logf("supervisor: operator %d exited: %v; starting a new one, as its Deployment would", n, err)
	}
}

func (p *supervisedOperator) stop() {
	p.cancel()
	<-p.done
}

// exitErrors are the errors of the operators that exited on their own so far.
func (p *supervisedOperator) exitErrors() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.exits...)
}

// expectOnlyLeaseLosses fails the scenario when an operator exited for another reason than a lost
// Lease, or exited so often that the supervisor gave up.
func (p *supervisedOperator) expectOnlyLeaseLosses(s *sc) {
	s.t.Helper()
	exits := p.exitErrors()
	s.t.Logf("the operator exited %d time(s) and was restarted", len(exits))
	if len(exits) >= maxOperatorExits {
		s.t.Errorf("the operator exited %d times (crash loop): %v", len(exits), exits)
	}
	for _, err := range exits {
		if !strings.Contains(err.Error(), leaseLost) {
			s.t.Errorf("the operator exited for another reason than a lost Lease: %v", err)
		}
	}
}

// managerOptions are operator.StartManager's options (namespace-scoped, Lease in the namespace, fast
// resyncs) for a scenario, without failing the test: the supervisor calls it from its goroutine.
func (s *sc) managerOptions() (*app.Options, error) {
	opts := app.NewOptions()
	opts.Kubeconfig = framework.KubeconfigPath()
	if s.opts.cp != nil {
		opts.Kubeconfig = s.opts.cp.kubeconfig
	}
	opts.Controller.Namespace = s.env.Namespace
	opts.Controller.ClusterScoped = false
	opts.Controller.ResyncDuration = 5 * time.Second
	opts.Controller.StatusRefreshInterval = 10 * time.Second
	opts.Controller.Workers = 2
	var err1, err2 error
	opts.MetricsAddr, err1 = freeAddr()
	opts.HealthAddr, err2 = freeAddr()
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
	opts.ShutdownGraceTime = 2 * time.Second
	if s.opts.manager != nil {
		s.opts.manager(opts)
	}
	if s.chart != nil {
		opts.Kubeconfig = s.chart.Kubeconfig
		if err := operator.SetChartFlags(opts, s.chart.Args); err != nil {
			return nil, err
		}
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("manager options: %w", err)
	}
	return opts, nil
}

// freeAddr is a 127.0.0.1 address with a port free at the time of the call.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}
