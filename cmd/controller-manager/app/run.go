package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/metrics"
	"github.com/kubetidb/tidb-operator/pkg/version"
)

// Main parses args, runs the controller-manager until SIGTERM or SIGINT and
// returns the process exit code.
func Main(args []string) int {
	if len(args) > 0 && args[0] == "render" {
		return renderMain(args[1:], os.Stdout, os.Stderr)
	}
	fs := flag.NewFlagSet("tidb-controller-manager", flag.ContinueOnError)
	klog.InitFlags(fs)
	opts := NewOptions()
	opts.AddFlags(fs)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage: tidb-controller-manager [flags]\n       tidb-controller-manager render -f tc.yaml\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if opts.PrintVersion {
		fmt.Println(version.Get())
		return 0
	}
	if err := opts.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "invalid flags:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	defer stop()
	if err := Run(ctx, opts); err != nil {
		klog.ErrorS(err, "controller-manager stopped")
		return 1
	}
	return 0
}

// Run starts the HTTP server and, once it holds the leader-election Lease
// (or at once with --leader-elect=false), the controllers. It returns nil
// when ctx is cancelled, and an error when the clients cannot be built, an
// address cannot be bound, or the Lease is lost.
func Run(ctx context.Context, opts *Options) error {
	logger := klog.FromContext(ctx)
	sampleAllocations(opts.Pprof)
	cfg, err := restConfig(opts)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build Kubernetes client: %w", err)
	}
	pc, err := versioned.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build pingcap.com client: %w", err)
	}
	if opts.Controller.Namespace == "" {
		opts.Controller.Namespace = inClusterNamespace()
	}
	metrics.InstallWorkqueueProvider()
	m := metrics.New()
	state := &readiness{}
	srv, err := startServers(ctx, opts, m, state)
	if err != nil {
		return err
	}
	defer srv.shutdown(opts.ShutdownGraceTime)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := kubernetes.NewForConfig(eventsConfig(cfg))
	if err != nil {
		return fmt.Errorf("build the events client: %w", err)
	}
	recorder, stopEvents := newRecorder(runCtx, events)
	defer stopEvents()
	run := func(ctx context.Context) error {
		return runControllers(ctx, opts, kube, pc, recorder, m, state)
	}
	opts.applyFeatures(logger)
	opts.applyClusterPermissions(logger)
	opts.applyMemoryLimit(runCtx, logger)
	logger.Info("starting tidb-controller-manager", "version", version.Get(), "namespace", opts.Controller.Namespace,
		"clusterScoped", opts.Controller.ClusterScoped, "workers", opts.Controller.Workers)
	if !opts.LeaderElect {
		return run(runCtx)
	}
	return runWithLeaderElection(runCtx, opts, kube, state, run)
}

// runWithLeaderElection runs fn while holding the Lease. Losing the Lease
// stops fn and returns an error, so the process restarts as a follower.
func runWithLeaderElection(ctx context.Context, opts *Options, kube kubernetes.Interface, state *readiness,
	fn func(context.Context) error) error {
	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, opts.Controller.Namespace, opts.leaseName(),
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("build leader-election lock: %w", err)
	}
	var (
		runErr error
		lost   bool
		wg     sync.WaitGroup
	)
	leCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   opts.LeaseDuration,
		RenewDeadline:   opts.RenewDeadline,
		RetryPeriod:     opts.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            opts.leaseName(),
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				wg.Add(1)
				defer wg.Done()
				klog.FromContext(ctx).Info("became leader", "lease", opts.leaseName(), "identity", id)
				runErr = fn(ctx)
				cancel()
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					lost = true
				}
				cancel()
			},
		},
	})
	if err != nil {
		return fmt.Errorf("build leader elector: %w", err)
	}
	state.setElector(elector)
	elector.Run(leCtx)
	wg.Wait()
	if runErr != nil {
		return runErr
	}
	if lost {
		return fmt.Errorf("lost the leader-election Lease %s/%s", opts.Controller.Namespace, opts.leaseName())
	}
	return nil
}

// runControllers builds the dependencies and controllers, starts the
// informers, waits for their caches, marks the process ready and runs the
// controllers until ctx is done.
func runControllers(ctx context.Context, opts *Options, kube kubernetes.Interface, pc versioned.Interface,
	recorder recorderT, m *metrics.Metrics, state *readiness) error {
	deps := controller.NewDependencies(opts.Controller, kube, pc, recorder, m)
	runners, err := newControllers(deps)
	if err != nil {
		return err
	}
	deps.StartInformers(ctx.Done())
	if !deps.WaitForCacheSync(ctx.Done()) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("informer caches did not sync")
	}
	state.setSynced()
	klog.FromContext(ctx).Info("caches synced; controllers running")
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Run(ctx, opts.Controller.Workers)
		}()
	}
	wg.Wait()
	return nil
}

// Events get a client with a rate limiter of their own: they are written
// in the background and must never hold up a reconciling write (a new
// cluster's three Events would otherwise take an eighth of the operator's
// request budget while many clusters converge).
const (
	eventsQPS   = 10
	eventsBurst = 25
)

// eventsConfig copies cfg for the events client, with its own limiter.
func eventsConfig(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.QPS, out.Burst = eventsQPS, eventsBurst
	out.RateLimiter = nil
	return out
}

// restConfig builds the client config from --kubeconfig, else $KUBECONFIG,
// else the in-cluster service account, and applies the QPS and burst flags.
func restConfig(opts *Options) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	switch {
	case opts.Kubeconfig != "":
		cfg, err = clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	case os.Getenv("KUBECONFIG") != "":
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	default:
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("load Kubernetes client config: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	if opts.KubeClientQPS > 0 {
		cfg.QPS = float32(opts.KubeClientQPS)
	}
	if opts.KubeClientBurst > 0 {
		cfg.Burst = opts.KubeClientBurst
	}
	cfg.UserAgent = "tidb-controller-manager/" + version.Get().GitVersion
	return cfg, nil
}

func inClusterNamespace() string {
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "default"
}
