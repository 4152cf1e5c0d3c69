// Command tidb-simulator answers the PD, TiKV, TiFlash, TiDB, TiCDC, TiProxy and Pump HTTP APIs of TiDB clusters whose
// pods run on a control plane without real containers (kube-apiserver + KWOK): it watches the pods labelled
// app.kubernetes.io/managed-by=tidb-operator and simulates one TiDB cluster per TidbCluster instance, and the
// dm-master HTTP API of each DMCluster (pods labelled app.kubernetes.io/name=dm-cluster).
// Point the operator at it with HTTP_PROXY=http://<listen> NO_PROXY=127.0.0.1,localhost; see
// docs/simulator.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/simulator"
)

// flags are the command-line options.
type flags struct {
	kubeconfig  string
	namespace   string
	listen      string
	listenExtra string
	watchTCs    bool
	tick        time.Duration
	realistic   bool
	timings     simulator.Timings
	opts        simulator.Options
	maxReplicas uint
	mysql       string
	socks       string
	tlsCACert   string
	tlsCAKey    string
}

func parseFlags(args []string) (*flags, error) {
	fs := flag.NewFlagSet("tidb-simulator", flag.ContinueOnError)
	klog.InitFlags(fs)
	f := &flags{}
	fast, def := simulator.FastTimings(), simulator.DefaultOptions()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the API server to watch (default $KUBECONFIG, else in-cluster)")
	fs.StringVar(&f.namespace, "namespace", "", "only watch this namespace (default all)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8379", "address of the proxy and admin API (/sim/v1)")
	fs.StringVar(&f.listenExtra, "listen-extra", "", "comma-separated extra addresses (e.g. 127.0.0.2:2379) that dispatch plain requests on their Host header")
	fs.BoolVar(&f.watchTCs, "watch-tidbclusters", true, "also watch pingcap.com/v1alpha1 TidbClusters once the CRD is served")
	fs.DurationVar(&f.tick, "tick", 200*time.Millisecond, "how often timers advance without requests")
	fs.BoolVar(&f.realistic, "realistic-timings", false, "start from realistic timings (PD max-store-down-time 30m, ...) instead of the fast test defaults; explicit timing flags still win")
	fs.DurationVar(&f.timings.MaxStoreDownTime, "max-store-down-time", fast.MaxStoreDownTime, "a store without heartbeats this long is Down (PD default 30m)")
	fs.DurationVar(&f.timings.StoreDisconnectTime, "store-disconnect-time", fast.StoreDisconnectTime, "a store without heartbeats this long is Disconnected (PD: 20s)")
	fs.DurationVar(&f.timings.RegionMigrationTime, "region-migration-time", fast.RegionMigrationTime, "an Offline store with enough Up stores becomes Tombstone after this")
	fs.DurationVar(&f.timings.LeaderDrainTime, "leader-drain-time", fast.LeaderDrainTime, "an evict-leader scheduler moves all leaders off a store within this")
	fs.DurationVar(&f.timings.LeaderReturnTime, "leader-return-time", fast.LeaderReturnTime, "balancing gives a store its share of leaders back within this")
	fs.DurationVar(&f.timings.TiCDCDrainTime, "ticdc-drain-time", fast.TiCDCDrainTime, "a drained TiCDC capture's tables move to the other captures within this")
	fs.DurationVar(&f.timings.PumpOfflineTime, "pump-offline-time", fast.PumpOfflineTime, "a Pump told to close registers offline and exits after this (while PD is reachable)")
	fs.DurationVar(&f.timings.PDReadyDelay, "pd-ready-delay", fast.PDReadyDelay, "a PD member answers /pd/api/v2/ready with 200 this long after its pod started or the cluster bootstrapped, whichever is later")
	fs.IntVar(&f.opts.TiCDCTables, "ticdc-tables", def.TiCDCTables, "tables the TiCDC captures of every simulated cluster replicate")
	fs.IntVar(&f.opts.RegionCount, "regions", def.RegionCount, "regions of every simulated cluster")
	fs.UintVar(&f.maxReplicas, "max-replicas", uint(def.MaxReplicas), "initial PD replication.max-replicas of every cluster")
	fs.StringVar(&f.opts.ClusterDomain, "cluster-domain", "", "domain of advertised addresses when the TidbCluster sets none (<pod>.<svc>.<ns>.svc.<domain>)")
	fs.StringVar(&f.opts.DefaultVersion, "default-version", def.DefaultVersion, "version reported for untagged images")
	fs.StringVar(&f.mysql, "mysql-backend", "", "a MySQL-protocol server (host:port, e.g. a local MariaDB) standing in for every TiDB's MySQL port: served through the SOCKS5 proxy, bootstrap SQL run on it once per cluster; empty: off")
	fs.StringVar(&f.socks, "socks-listen", "127.0.0.1:1080", "address of the SOCKS5 proxy (clients: ALL_PROXY=socks5://<it>) with --mysql-backend")
	fs.StringVar(&f.tlsCACert, "tls-ca-cert", "", "PEM file of a CA certificate: the proxy then serves HTTPS (CONNECT) to simulated endpoints with certificates this CA issues and requires client certificates it signed (with --tls-ca-key)")
	fs.StringVar(&f.tlsCAKey, "tls-ca-key", "", "PEM file of the private key of --tls-ca-cert")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if (f.tlsCACert == "") != (f.tlsCAKey == "") {
		return nil, errors.New("--tls-ca-cert and --tls-ca-key go together")
	}
	if f.realistic {
		f.timings = overrideSet(fs, simulator.RealisticTimings(), f.timings)
	}
	f.opts.Timings = f.timings
	f.opts.MaxReplicas = uint64(f.maxReplicas)
	return f, nil
}

// overrideSet returns base with the timings whose flags were given explicitly taken from set.
func overrideSet(fs *flag.FlagSet, base, set simulator.Timings) simulator.Timings {
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "max-store-down-time":
			base.MaxStoreDownTime = set.MaxStoreDownTime
		case "store-disconnect-time":
			base.StoreDisconnectTime = set.StoreDisconnectTime
		case "region-migration-time":
			base.RegionMigrationTime = set.RegionMigrationTime
		case "leader-drain-time":
			base.LeaderDrainTime = set.LeaderDrainTime
		case "leader-return-time":
			base.LeaderReturnTime = set.LeaderReturnTime
		case "ticdc-drain-time":
			base.TiCDCDrainTime = set.TiCDCDrainTime
		case "pump-offline-time":
			base.PumpOfflineTime = set.PumpOfflineTime
		case "pd-ready-delay":
			base.PDReadyDelay = set.PDReadyDelay
		}
	})
	return base
}

func main() {
	f, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "tidb-simulator:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f); err != nil {
		klog.ErrorS(err, "tidb-simulator failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

func run(ctx context.Context, f *flags) error {
	path := f.kubeconfig
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("load kubeconfig %q: %w", path, err)
	}
	cfg.UserAgent = "tidb-simulator"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	var dyn dynamic.Interface
	if f.watchTCs {
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			return fmt.Errorf("dynamic client: %w", err)
		}
	}
	var extra []string
	for _, addr := range strings.Split(f.listenExtra, ",") {
		if addr = strings.TrimSpace(addr); addr != "" {
			extra = append(extra, addr)
		}
	}
	log := klog.FromContext(ctx)
	var ca *simulator.TLSAuthority
	if f.tlsCACert != "" {
		if ca, err = simulator.LoadTLSAuthority(f.tlsCACert, f.tlsCAKey); err != nil {
			return err
		}
	}
	sim, err := simulator.New(simulator.Config{
		Kube: kube, Dynamic: dyn, Namespace: f.namespace, Listen: f.listen, ExtraListen: extra,
		Options: f.opts, TickInterval: f.tick, MySQLBackend: f.mysql, SOCKSListen: f.socks, TLS: ca,
	}, log)
	if err != nil {
		return err
	}
	log.Info("tidb-simulator starting", "proxy", sim.URL(), "addresses", sim.Addrs(), "timings", f.opts.Timings,
		"regions", f.opts.RegionCount, "maxReplicas", f.opts.MaxReplicas, "ticdcTables", f.opts.TiCDCTables,
		"socks5", sim.SOCKSAddr(), "mysqlBackend", f.mysql, "tls", ca != nil)
	return sim.Run(ctx)
}
