// Command tidb-discovery is the per-cluster discovery service: it tells
// each new PD pod whether to bootstrap the PD cluster or join it, answers
// /verify for TiKV across Kubernetes clusters, and proxies the PD dashboard.
// The operator runs one as Deployment <tc>-discovery with TC_NAME and
// MY_POD_NAMESPACE set, and one per DMCluster as <dc>-dm-discovery with
// TC_NAME=<dc>, which dm-master asks the same way (/new/{b64}/dm). See docs/discovery.md and package pkg/discovery.
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

	"k8s.io/klog/v2"

	"github.com/kubetidb/tidb-operator/pkg/version"
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Getenv, os.Stderr))
}

// runMain parses args and the environment (through getenv), runs the
// service until SIGTERM or SIGINT and returns the exit code: 0 after a clean
// shutdown, 1 when the environment is incomplete or the service fails, 2 for
// bad flags. Errors before klog is set up go to stderr.
func runMain(args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tidb-discovery", flag.ContinueOnError)
	fs.SetOutput(stderr)
	klog.InitFlags(fs)
	opts := newOptions()
	opts.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if opts.printVersion {
		fmt.Println(version.Get())
		return 0
	}
	if err := opts.validate(); err != nil {
		_, _ = fmt.Fprintln(stderr, "tidb-discovery: invalid flags:", err)
		return 2
	}
	if err := opts.loadEnv(getenv); err != nil {
		_, _ = fmt.Fprintln(stderr, "tidb-discovery:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background().WithValues("tidbcluster", klog.KRef(opts.namespace, opts.tcName)))
	if err := run(ctx, opts); err != nil {
		klog.FromContext(ctx).Error(err, "tidb-discovery stopped")
		klog.Flush()
		return 1
	}
	klog.Flush()
	return 0
}
