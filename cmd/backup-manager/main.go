// Command backup-manager is what the Backup and Restore Jobs run
// (/backup-manager in the operator image): `backup`, `restore`, `clean`,
// `export`, `import` and `compact` (a CompactBackup's Job). It reads its Backup or Restore, runs BR (dumpling,
// TiDB Lightning), and writes the CR's status itself. See
// docs/backup-manager.md and package pkg/backup/manager. The TidbInitializer
// Job runs its `tidb-initializer` subcommand (package pkg/initializer).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubetidb/tidb-operator/pkg/backup/manager"
	"github.com/kubetidb/tidb-operator/pkg/client/clientset/versioned"
	"github.com/kubetidb/tidb-operator/pkg/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// subcommands maps each subcommand to the CR name flag it needs and what it runs.
var subcommands = map[string]struct {
	nameFlag string
	run      func(*manager.Manager, context.Context) error
}{
	"backup":  {"backupName", (*manager.Manager).Backup},
	"clean":   {"backupName", (*manager.Manager).Clean},
	"export":  {"backupName", (*manager.Manager).Export},
	"restore": {"restoreName", (*manager.Manager).Restore},
	"import":  {"restoreName", (*manager.Manager).Import},
	"compact": {"resourceName", (*manager.Manager).Compact},
}

// options are the flags of every subcommand.
type options struct {
	manager.Options
	backupName, restoreName, resourceName string
	kubeconfig                            string
	printVersion                          bool
}

// addFlags registers the flags the Jobs pass (docs/backup-manager.md).
func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("NAMESPACE"), "namespace of the Backup or Restore")
	fs.StringVar(&o.backupName, "backupName", "", "name of the Backup (backup, clean, export)")
	fs.StringVar(&o.restoreName, "restoreName", "", "name of the Restore (restore, import)")
	fs.StringVar(&o.resourceName, "resourceName", "", "name of the CompactBackup (compact)")
	fs.StringVar(&o.TiKVVersion, "tikvVersion", "", "the cluster's TiKV version")
	fs.StringVar(&o.Mode, "mode", "", "log (log backup) or pitr (PiTR restore); snapshot when empty")
	fs.StringVar(&o.Subcommand, "subcommand", "", "log backup command: log-start, log-stop, log-pause, log-resume, log-status or log-truncate")
	fs.BoolVar(&o.ClusterTLS, "cluster-tls", false, "the cluster has tlsCluster: use the mounted cluster client certificate")
	fs.BoolVar(&o.ClientTLS, "client-tls", false, "TiDB has tlsClient: use the mounted TiDB client certificate")
	fs.BoolVar(&o.SkipClientCA, "skipClientCA", false, "TiDB has tlsClient.skipInternalClientCA (accepted; BR does not log in to TiDB)")
	fs.StringVar(&o.BRPath, "br-path", "", "BR binary (default "+manager.DefaultBRPath+" when present, else br from PATH)")
	fs.StringVar(&o.DumplingPath, "dumpling-path", "", "dumpling binary (default dumpling from PATH)")
	fs.StringVar(&o.LightningPath, "lightning-path", "", "TiDB Lightning binary (default tidb-lightning from PATH)")
	fs.StringVar(&o.TiKVCtlPath, "tikv-ctl-path", "", "tikv-ctl binary (default "+manager.DefaultTiKVCtlPath+" when present, else tikv-ctl from PATH)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; in-cluster config when empty")
	fs.BoolVar(&o.printVersion, "version", false, "print the version and exit")
}

// Run parses `<subcommand> [flags]`, runs it and returns the exit code: 0 on
// success, 1 when it failed (the CR then says why, when it could be
// written), 2 for bad usage.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "version") {
		_, _ = fmt.Fprintln(stdout, version.Get())
		return 0
	}
	if len(args) == 0 {
		_, _ = fmt.Fprintln(stderr, "usage: backup-manager backup|restore|clean|export|import|compact|tidb-initializer [flags]")
		return 2
	}
	if args[0] == initializerCommand {
		return runInitializer(ctx, args[1:], stdout, stderr)
	}
	sub, ok := subcommands[args[0]]
	if !ok {
		_, _ = fmt.Fprintf(stderr, "backup-manager: unknown subcommand %q (want backup, restore, clean, export, import or compact)\n", args[0])
		return 2
	}
	fs := flag.NewFlagSet("backup-manager "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	o.addFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch o.Name = o.backupName; sub.nameFlag {
	case "restoreName":
		o.Name = o.restoreName
	case "resourceName":
		o.Name = o.resourceName
	}
	if o.Namespace == "" || o.Name == "" {
		_, _ = fmt.Fprintf(stderr, "backup-manager %s: --namespace and --%s are required\n", args[0], sub.nameFlag)
		return 2
	}
	m, err := newManager(o, stdout)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "backup-manager:", err)
		return 1
	}
	if err := sub.run(m, ctx); err != nil {
		_, _ = fmt.Fprintf(stderr, "backup-manager %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// newManager builds the clients from --kubeconfig or the in-cluster config.
func newManager(o options, out io.Writer) (*manager.Manager, error) {
	var cfg *rest.Config
	var err error
	if o.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading the Kubernetes client configuration: %w", err)
	}
	client, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the pingcap client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	return &manager.Manager{Client: client, Kube: kube, Opts: o.Options, Out: out}, nil
}
