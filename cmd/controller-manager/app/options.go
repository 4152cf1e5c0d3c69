// Package app is the tidb-controller-manager process: flags, API clients,
// leader election, informer factories, the controllers, and the HTTP server
// for /metrics, /healthz and /readyz. main.go only calls Main.
package app

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/controller"
	"github.com/kubetidb/tidb-operator/pkg/version"
)

// Options are the command-line settings of the controller-manager.
type Options struct {
	Controller *controller.CLIConfig

	Kubeconfig  string
	MetricsAddr string
	// Pprof serves net/http/pprof under /debug/pprof/ on MetricsAddr.
	Pprof             bool
	HealthAddr        string
	KubeClientQPS     float64
	KubeClientBurst   int
	LeaderElect       bool
	LeaseDuration     time.Duration
	RenewDeadline     time.Duration
	RetryPeriod       time.Duration
	ResourceLock      string
	LeaderElectionID  string
	PrintVersion      bool
	ClusterPermNode   bool
	ClusterPermPV     bool
	ClusterPermSC     bool
	TestMode          bool
	Features          string
	ShutdownGraceTime time.Duration
	// MemoryLimit is the container's memory limit (a quantity, "" for
	// none); the Go soft memory limit is set below it (memlimit.go).
	MemoryLimit string
	// GCBudget is the garbage the heap may hold above what is live before
	// a collection (a quantity; "0" leaves GOGC alone); memlimit.go.
	GCBudget string
}

// OperatorImage is the image this build ships in, pinned to its version:
// the default of the discovery and backup-manager images, as the TiDB
// Operator pins its own, so a cluster never runs a floating tag.
func OperatorImage() string { return "kubetidb/tidb-operator:" + version.Get().GitVersion }

// defaultCLIConfig is the controller's defaults with the images pinned to
// this build (OperatorImage).
func defaultCLIConfig() *controller.CLIConfig {
	c := controller.DefaultCLIConfig()
	c.TiDBDiscoveryImage, c.TiDBBackupManagerImage = OperatorImage(), OperatorImage()
	return c
}

// NewOptions returns the defaults of every flag.
func NewOptions() *Options {
	return &Options{
		Controller:        defaultCLIConfig(),
		MetricsAddr:       ":6060",
		HealthAddr:        ":6061",
		LeaderElect:       true,
		LeaseDuration:     15 * time.Second,
		RenewDeadline:     10 * time.Second,
		RetryPeriod:       2 * time.Second,
		ResourceLock:      "leases",
		ShutdownGraceTime: 10 * time.Second,
		GCBudget:          defaultGCBudget,
	}
}

// AddFlags registers the flags on fs. Flags accept one or two dashes, as the
// TiDB Operator's do, so its Helm values and command lines keep working.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	c := o.Controller
	fs.BoolVar(&o.PrintVersion, "V", false, "Print version information and exit.")
	fs.BoolVar(&o.PrintVersion, "version", false, "Print version information and exit.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Default: $KUBECONFIG, else the in-cluster config.")
	fs.IntVar(&c.Workers, "workers", c.Workers, "Concurrent syncs per controller.")
	fs.BoolVar(&c.ClusterScoped, "cluster-scoped", c.ClusterScoped,
		"Watch every namespace. When false, only the operator's namespace (--namespace or $NAMESPACE).")
	fs.StringVar(&c.Namespace, "namespace", os.Getenv("NAMESPACE"),
		"The operator's own namespace: the leader-election Lease lives here, and it is the only watched namespace when --cluster-scoped=false. Default: $NAMESPACE.")
	fs.StringVar(&c.Selector, "selector", "", "Label selector restricting the custom resources this instance handles (e.g. team=a).")
	fs.DurationVar(&c.ResyncDuration, "resync-duration", c.ResyncDuration, "Informer resync period: how often every custom resource (TidbCluster, Backup, …) is synced again; the caches of built-in kinds do not resync (their handlers ignore resyncs).")
	fs.BoolVar(&c.AutoFailover, "auto-failover", c.AutoFailover, "Replace failed PD, TiKV, TiDB and TiFlash members automatically.")
	fs.BoolVar(&c.ManagePersistentVolumes, "manage-persistent-volumes", c.ManagePersistentVolumes,
		"Watch and patch the PersistentVolumes of cluster PVCs (spec.pvReclaimPolicy, spec.enablePVReclaim). Needs list, watch and patch on persistentvolumes.")
	fs.DurationVar(&c.StatusRefreshInterval, "status-refresh-interval", c.StatusRefreshInterval,
		"How often a converged cluster's members are read again from PD and TiDB (0: every sync).")
	fs.DurationVar(&c.StatusProgressInterval, "status-progress-interval", c.StatusProgressInterval,
		"How long, at most, a TidbCluster status that only shows progress waits to be written with the next one (0: every change at once). Ready, Degraded or Progressing turning, a new generation and failure records are written at once.")
	fs.DurationVar(&c.PDFailoverPeriod, "pd-failover-period", c.PDFailoverPeriod, "Grace period before a failed PD member is replaced.")
	fs.DurationVar(&c.TiKVFailoverPeriod, "tikv-failover-period", c.TiKVFailoverPeriod, "Grace period before a Down TiKV store is replaced.")
	fs.DurationVar(&c.TiDBFailoverPeriod, "tidb-failover-period", c.TiDBFailoverPeriod, "Grace period before an unhealthy TiDB server is replaced.")
	fs.DurationVar(&c.TiFlashFailoverPeriod, "tiflash-failover-period", c.TiFlashFailoverPeriod, "Grace period before a Down TiFlash store is replaced.")
	fs.DurationVar(&c.DMMasterFailoverPeriod, "dm-master-failover-period", c.DMMasterFailoverPeriod, "Grace period before a failed dm-master member is replaced.")
	fs.DurationVar(&c.DMWorkerFailoverPeriod, "dm-worker-failover-period", c.DMWorkerFailoverPeriod, "Grace period before an offline dm-worker gets an extra pod.")
	fs.BoolVar(&c.DetectNodeFailure, "detect-node-failure", false, "Mark failed PD members and TiKV/TiFlash stores host-down when their node is NotReady/Unknown or has RODiskFound, or the failure outlasts --pod-hard-recovery-period; clusters annotated app.kubernetes.io/auto-failure-recovery=true then get such members replaced.")
	fs.DurationVar(&c.PodHardRecoveryPeriod, "pod-hard-recovery-period", c.PodHardRecoveryPeriod, "How long a failure lasts before its member is considered host-down.")
	fs.StringVar(&c.TiDBBackupManagerImage, "tidb-backup-manager-image", c.TiDBBackupManagerImage, "Image of backup and restore jobs.")
	fs.StringVar(&c.TiDBDiscoveryImage, "tidb-discovery-image", c.TiDBDiscoveryImage, "Image of the per-cluster discovery Deployment.")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "Address of the /metrics endpoint.")
	fs.BoolVar(&o.Pprof, "pprof", o.Pprof, "Serve Go's profiles (net/http/pprof) under /debug/pprof/ on --metrics-addr (off by default: heap and goroutine dumps show cluster names).")
	fs.StringVar(&o.HealthAddr, "health-addr", o.HealthAddr, "Address of /healthz and /readyz; may equal --metrics-addr to share one server.")
	fs.Float64Var(&o.KubeClientQPS, "kube-client-qps", 0, "API client QPS; 0 means the built-in default (50).")
	fs.IntVar(&o.KubeClientBurst, "kube-client-burst", 0, "API client burst; 0 means the built-in default (100).")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run only while holding the leader-election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-lease-duration", o.LeaseDuration, "Leader-election lease duration.")
	fs.DurationVar(&o.RenewDeadline, "leader-renew-deadline", o.RenewDeadline, "Leader-election renew deadline.")
	fs.DurationVar(&o.RetryPeriod, "leader-retry-period", o.RetryPeriod, "Leader-election retry period.")
	fs.StringVar(&o.ResourceLock, "leader-resource-lock", o.ResourceLock, "Leader-election lock type; only \"leases\" is supported.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", "", "Name of the Lease. Default: tidb-controller-manager[-$HELM_RELEASE].")
	fs.BoolVar(&o.ClusterPermNode, "cluster-permission-node", false,
		"With --cluster-scoped=false: the operator may get Nodes (store/TiDB topology labels, --detect-node-failure). Cluster-scoped implies it.")
	fs.BoolVar(&o.ClusterPermPV, "cluster-permission-pv", false,
		"With --cluster-scoped=false: the operator may list, watch and patch PersistentVolumes (spec.pvReclaimPolicy, meta labels on PVs). Cluster-scoped implies it.")
	fs.BoolVar(&o.ClusterPermSC, "cluster-permission-sc", false,
		"With --cluster-scoped=false: the operator may get StorageClasses (PVC growth). Cluster-scoped implies it.")
	fs.BoolVar(&o.TestMode, "test-mode", false, "Accepted for compatibility with the TiDB Operator (whose e2e tests it slowed down); has no effect here, and a warning is logged when set.")
	fs.StringVar(&o.Features, "features", "", "Feature gates k=v,... (StableScheduling, AdvancedStatefulSet, VolumeModifying, VolumeReplacing); only VolumeModifying is acted on.")
	fs.StringVar(&o.MemoryLimit, "memory-limit", os.Getenv("MEMORY_LIMIT"),
		"The container's memory limit (e.g. 512Mi; the chart passes limits.memory); the Go runtime is asked to stay under 90% of it, unless GOMEMLIMIT is set. Default: $MEMORY_LIMIT, else none.")
	fs.StringVar(&o.GCBudget, "gc-budget", o.GCBudget,
		"Garbage the Go heap may hold above its live part before a collection (e.g. 16Mi), instead of GOGC's as much again as is live: a large cache is then not doubled. 0 leaves the runtime's default.")
	fs.DurationVar(&o.ShutdownGraceTime, "shutdown-grace-period", o.ShutdownGraceTime, "How long to wait for workers and the HTTP servers on SIGTERM.")
}

// Validate checks the flags' values together and returns every problem found.
func (o *Options) Validate() error {
	var errs []error
	c := o.Controller
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", c.Workers))
	}
	if !c.ClusterScoped && c.Namespace == "" {
		errs = append(errs, errors.New("--cluster-scoped=false needs --namespace or $NAMESPACE"))
	}
	if _, err := labels.Parse(c.Selector); err != nil {
		errs = append(errs, fmt.Errorf("--selector: %w", err))
	}
	if c.StatusRefreshInterval < 0 {
		errs = append(errs, errors.New("--status-refresh-interval must not be negative"))
	}
	if c.StatusProgressInterval < 0 {
		errs = append(errs, errors.New("--status-progress-interval must not be negative"))
	}
	if c.ResyncDuration <= 0 {
		errs = append(errs, errors.New("--resync-duration must be positive"))
	}
	if o.ResourceLock != "leases" {
		errs = append(errs, fmt.Errorf("--leader-resource-lock %q is not supported; use leases", o.ResourceLock))
	}
	if o.LeaderElect && (o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod || o.RetryPeriod <= 0) {
		errs = append(errs, errors.New("leader election needs lease-duration > renew-deadline > retry-period > 0"))
	}
	if _, err := o.featureGates(); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseMemoryLimit(o.MemoryLimit); err != nil {
		errs = append(errs, err)
	}
	if _, err := parseQuantity("--gc-budget", o.GCBudget); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// knownFeatures are the TiDB Operator's feature gates and whether this
// operator acts on each; the others are accepted (and logged at start).
var knownFeatures = map[string]bool{
	"StableScheduling": false, "AdvancedStatefulSet": false, "VolumeModifying": true, "VolumeReplacing": false,
}

// featureGates parses --features (k=v,...). It fails on an entry that is
// not key=value, a gate the TiDB Operator does not have, or a value that
// is not a boolean.
func (o *Options) featureGates() (map[string]bool, error) {
	gates := map[string]bool{}
	if o.Features == "" {
		return gates, nil
	}
	var errs []error
	for _, kv := range strings.Split(o.Features, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("--features: %q is not key=value", kv))
			continue
		}
		if _, known := knownFeatures[k]; !known {
			errs = append(errs, fmt.Errorf("--features: unknown feature gate %q", k))
			continue
		}
		on, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("--features: %s=%q is not a boolean", k, v))
			continue
		}
		gates[k] = on
	}
	return gates, errors.Join(errs...)
}

// applyFeatures sets the gates this operator acts on in the controllers'
// configuration and names the ones switched on that it does not act on.
func (o *Options) applyFeatures(logger klog.Logger) {
	gates, _ := o.featureGates() // Validate reported any error
	o.Controller.VolumeModifying = gates["VolumeModifying"]
	for k, on := range gates {
		if on && !knownFeatures[k] {
			logger.Info("WARNING: feature gate accepted but not implemented by this operator", "feature", k)
		}
	}
	if o.TestMode {
		logger.Info("WARNING: flag accepted but not acted on by this operator: the TiDB Operator's test pauses are not added", "flag", "--test-mode")
	}
}

// applyClusterPermissions tells the controllers which cluster-wide objects
// they may read or patch (--cluster-permission-*) and logs what a
// namespaced operator goes without.
func (o *Options) applyClusterPermissions(logger klog.Logger) {
	c := o.Controller
	c.ApplyClusterPermissions(controller.ClusterPermissions{
		Nodes: o.ClusterPermNode, PersistentVolumes: o.ClusterPermPV, StorageClasses: o.ClusterPermSC,
	})
	if !c.ReadNodes || !c.ReadStorageClasses || !c.ManagePersistentVolumes {
		logger.Info("running without some cluster-wide permissions; each cluster names what it misses in its Unsupported condition",
			"nodes", c.ReadNodes, "persistentVolumes", c.ManagePersistentVolumes, "storageClasses", c.ReadStorageClasses)
	}
}

// leaseName is the Lease the replicas compete for.
func (o *Options) leaseName() string {
	if o.LeaderElectionID != "" {
		return o.LeaderElectionID
	}
	if rel := os.Getenv("HELM_RELEASE"); rel != "" {
		return "tidb-controller-manager-" + rel
	}
	return "tidb-controller-manager"
}
