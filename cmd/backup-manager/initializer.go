package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/kubetidb/tidb-operator/pkg/initializer"
	"github.com/kubetidb/tidb-operator/pkg/tidbsql"
)

// initializerCommand is the subcommand the TidbInitializer Job runs.
const initializerCommand = "tidb-initializer"

// initializerOptions are the flags of `backup-manager tidb-initializer`
// (the contract with pkg/controller/tidbinitializer's Job builder).
type initializerOptions struct {
	host, permitHost         string
	port                     int
	passwordDir, initSQLFile string
	initSQL, tlsDir          string
	tlsSkipCA                bool
	wait                     time.Duration
}

func (o *initializerOptions) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.host, "host", "", "TiDB's MySQL host (the cluster's TiDB Service)")
	fs.IntVar(&o.port, "port", tidbsql.DefaultPort, "TiDB's MySQL port")
	fs.StringVar(&o.passwordDir, "password-dir", "", "passwordSecret mounted as a volume: key = user, value = password")
	fs.StringVar(&o.initSQLFile, "init-sql-file", "", "file with the init SQL (initSqlConfigMap's init-sql); wins over --init-sql")
	fs.StringVar(&o.initSQL, "init-sql", os.Getenv("INIT_SQL"), "init SQL (spec.initSql; default $INIT_SQL)")
	fs.StringVar(&o.permitHost, "permit-host", "", "the only host root may connect from afterwards; empty: any")
	fs.StringVar(&o.tlsDir, "tls-dir", "", "TiDB client certificate Secret mounted as a volume (ca.crt, tls.crt, tls.key); empty: no TLS")
	fs.BoolVar(&o.tlsSkipCA, "tls-skip-ca", false, "with --tls-dir: do not verify TiDB's certificate, and need no ca.crt (spec.tidb.tlsClient.skipInternalClientCA)")
	fs.DurationVar(&o.wait, "wait", 5*time.Minute, "how long to retry while TiDB does not answer")
}

// runInitializer runs `tidb-initializer [flags]` and returns the exit
// code: 0 initialized, 1 failed (the message says which step), 2 bad usage.
func runInitializer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup-manager "+initializerCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o initializerOptions
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.host == "" || fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "backup-manager %s: --host is required and no arguments are taken\n", initializerCommand)
		return 2
	}
	if o.tlsSkipCA && o.tlsDir == "" {
		_, _ = fmt.Fprintf(stderr, "backup-manager %s: --tls-skip-ca needs --tls-dir\n", initializerCommand)
		return 2
	}
	opts, err := o.resolve(stdout)
	if err == nil {
		err = initializer.Run(ctx, opts)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "backup-manager %s: %v\n", initializerCommand, err)
		return 1
	}
	return 0
}

// resolve reads the mounted Secrets and the SQL file into the program's options.
func (o *initializerOptions) resolve(log io.Writer) (initializer.Options, error) {
	out := initializer.Options{
		Target:     tidbsql.Target{Addr: net.JoinHostPort(o.host, strconv.Itoa(o.port))},
		PermitHost: o.permitHost, Wait: o.wait, RetryInterval: 2 * time.Second, Log: log,
	}
	var err error
	if out.Users, err = initializer.ReadUsers(o.passwordDir); err != nil {
		return out, err
	}
	if out.InitSQL, err = initializer.ReadSQL(o.initSQLFile, o.initSQL); err != nil {
		return out, err
	}
	if o.tlsDir != "" {
		data, err := initializer.ReadTLSDir(o.tlsDir)
		if err != nil {
			return out, err
		}
		if out.Target.TLS, err = tidbsql.TLSConfigFromSecretData(data, o.tlsSkipCA); err != nil {
			return out, err
		}
	}
	return out, nil
}
